package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"golang.org/x/term"
)

// progress shows a long operation (migrate, backup, a call such as spec
// import or export of many specs) on stderr while it runs, when stderr is
// a terminal: one line, redrawn in place with a carriage return, naming
// the step and the time spent; it is wiped when the operation ends, so
// only the result stays. When stderr is not a terminal (a pipe, a log
// file, CI) it writes nothing. stdout is never touched.
type progress struct {
	w     io.Writer
	label string
	start time.Time
	stop  chan struct{}
	done  chan struct{}

	mu    sync.Mutex
	step  string
	width int // of the last line drawn
}

// progressEvery is how often the line is redrawn.
const progressEvery = 250 * time.Millisecond

// startProgress starts showing label on w when w is a terminal; a nil
// *progress (not a terminal) ignores Step and Done.
func startProgress(w io.Writer, label string) *progress {
	f, ok := w.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return nil
	}
	p := &progress{w: w, label: label, start: time.Now(), step: "working", stop: make(chan struct{}), done: make(chan struct{})}
	p.draw()
	go func() {
		defer close(p.done)
		t := time.NewTicker(progressEvery)
		defer t.Stop()
		for {
			select {
			case <-p.stop:
				return
			case <-t.C:
				p.draw()
			}
		}
	}()
	return p
}

// Step names what the operation does now.
func (p *progress) Step(format string, args ...any) {
	if p == nil {
		return
	}
	p.mu.Lock()
	p.step = fmt.Sprintf(format, args...)
	p.mu.Unlock()
	p.draw()
}

// Done wipes the line.
func (p *progress) Done() {
	if p == nil {
		return
	}
	close(p.stop)
	<-p.done
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprint(p.w, "\r"+strings.Repeat(" ", p.width)+"\r")
}

func (p *progress) draw() {
	p.mu.Lock()
	defer p.mu.Unlock()
	line := fmt.Sprintf("%s: %s… %s", p.label, p.step, time.Since(p.start).Truncate(100*time.Millisecond))
	pad := ""
	if n := len([]rune(line)); n < p.width {
		pad = strings.Repeat(" ", p.width-n)
	} else {
		p.width = n
	}
	fmt.Fprint(p.w, "\r"+line+pad)
}
