//go:build linux

package procrun

import (
	"bytes"
	"os"
	"strconv"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// runIDVar names the environment variable that marks every process of one
// Run: the command's shell gets it and its descendants inherit it, so a
// process that left the command's process group (setsid, a double fork)
// is still known as the call's.
const runIDVar = "SPECD_RUN_ID"

var (
	subreaperOnce sync.Once
	subreaperOK   bool
)

// becomeSubreaper makes this process a child subreaper (prctl
// PR_SET_CHILD_SUBREAPER), once: a command's descendant whose parent exits
// is reparented to the server instead of init, so it stays beneath the
// server in /proc, where sweep finds it. It reports whether that holds.
func becomeSubreaper() bool {
	subreaperOnce.Do(func() {
		subreaperOK = unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == nil
	})
	return subreaperOK
}

// proc is what sweep needs of one /proc/PID/stat.
type proc struct {
	ppid, pgrp, sid int
	zombie          bool
}

// readStat reads one process's stat line; ok is false when it vanished.
func readStat(pid int) (p proc, ok bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return proc{}, false
	}
	// pid (comm) state ppid pgrp session ...; comm may hold spaces and parentheses
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return proc{}, false
	}
	f := bytes.Fields(b[i+1:])
	if len(f) < 4 {
		return proc{}, false
	}
	p.ppid, _ = strconv.Atoi(string(f[1]))
	p.pgrp, _ = strconv.Atoi(string(f[2]))
	p.sid, _ = strconv.Atoi(string(f[3]))
	p.zombie = string(f[0]) == "Z" || string(f[0]) == "X"
	return p, true
}

// readProcs reads the stat line of every process; those that vanish
// meanwhile are left out.
func readProcs() map[int]proc {
	procs := map[int]proc{}
	d, err := os.Open("/proc")
	if err != nil {
		return procs
	}
	names, _ := d.Readdirnames(-1)
	_ = d.Close()
	for _, name := range names {
		if pid, err := strconv.Atoi(name); err == nil {
			if p, ok := readStat(pid); ok {
				procs[pid] = p
			}
		}
	}
	return procs
}

// childrenOf lists the children of every thread of pid
// (/proc/PID/task/TID/children); ok is false when the kernel has no such
// files (CONFIG_PROC_CHILDREN off) or pid vanished.
func childrenOf(pid int) (kids []int, ok bool) {
	base := "/proc/" + strconv.Itoa(pid) + "/task"
	d, err := os.Open(base)
	if err != nil {
		return nil, false
	}
	tids, _ := d.Readdirnames(-1)
	_ = d.Close()
	for _, tid := range tids {
		b, err := os.ReadFile(base + "/" + tid + "/children")
		if err != nil {
			if os.IsNotExist(err) {
				return nil, false
			}
			continue // the thread ended
		}
		for _, f := range bytes.Fields(b) {
			if c, err := strconv.Atoi(string(f)); err == nil {
				kids = append(kids, c)
			}
		}
	}
	return kids, true
}

// readBelow reads the stat lines of every process below root, walking the
// children files rather than all of /proc; ok is false when those files
// are missing (the caller then scans /proc).
func readBelow(root int) (map[int]proc, bool) {
	procs := map[int]proc{}
	queue := []int{root}
	for len(queue) > 0 {
		pid := queue[0]
		queue = queue[1:]
		kids, ok := childrenOf(pid)
		if !ok && pid == root {
			return nil, false
		}
		for _, c := range kids {
			if _, seen := procs[c]; seen {
				continue
			}
			if p, ok := readStat(c); ok {
				procs[c] = p
				queue = append(queue, c)
			}
		}
	}
	return procs, true
}

// hasEnv reports whether process pid's initial environment holds entry
// (NAME=value) exactly.
func hasEnv(pid int, entry string) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
	if err != nil {
		return false
	}
	for _, kv := range bytes.Split(b, []byte{0}) {
		if string(kv) == entry {
			return true
		}
	}
	return false
}

// sweepLimit bounds how long sweep keeps killing and reaping; a process in
// uninterruptible sleep can delay its death past it.
const sweepLimit = 5 * time.Second

// sweep kills (SIGKILL) every process of the Run whose shell was shellPid
// and whose processes carry runIDVar=runID, and reaps those that became
// this process's children, after the shell itself has been waited for.
// A process belongs to the Run when it is in the shell's process group,
// carries the Run's mark in its environment, or descends from such a
// process. It rescans until none is left alive, so a process forked while
// its parent was being killed is found too. The processes below the server
// are found through the children files of /proc (cheap: a call with no
// escaped child costs one walk of the server's children), and once
// anything was killed a last round scans all of /proc to confirm.
//
// Only processes attributed to the Run are reaped, plus zombie children in
// a session other than the server's: the server never starts a process in a
// new session, so those are orphans nobody else waits for. Children that
// os/exec waits for (other calls' shells, git) are never reaped here.
func sweep(shellPid int, runID string) {
	s := sweeper{
		self:        os.Getpid(),
		shellPid:    shellPid,
		mark:        runIDVar + "=" + runID,
		onlyBeneath: becomeSubreaper(),
		seen:        map[int]bool{},
	}
	s.mySid, _ = unix.Getsid(0)
	deadline := time.Now().Add(sweepLimit)
	// confirm makes a round scan all of /proc: after kills, the children
	// files (read while processes exit) may have missed one.
	killed, confirm := false, false
	for {
		procs, candidates := s.scan(confirm)
		ours := s.attribute(procs, candidates)
		stopAll(procs, ours)
		left, killedNow := s.kill(procs, ours)
		killed = killed || killedNow
		left += s.reap(procs, ours)
		if left == 0 && killed && !confirm {
			confirm = true
			continue
		}
		if left == 0 || time.Now().After(deadline) {
			return
		}
		confirm = false
		time.Sleep(5 * time.Millisecond) // SIGKILL is delivered asynchronously
	}
}

// sweeper holds what one sweep knows across its rounds.
type sweeper struct {
	self, mySid, shellPid int
	mark                  string       // runIDVar=runID
	onlyBeneath           bool         // this process is a subreaper: the Run's processes are below it
	seen                  map[int]bool // attributed in an earlier round: a zombie's environment is gone
}

// scan reads the processes of one round. candidates is nil when any
// process may belong to the Run (not a subreaper); otherwise it holds the
// pids below this process. When confirm is set, or the children files are
// missing, it scans all of /proc.
func (s *sweeper) scan(confirm bool) (procs map[int]proc, candidates map[int]bool) {
	if !s.onlyBeneath {
		return readProcs(), nil
	}
	if !confirm {
		if procs, ok := readBelow(s.self); ok {
			candidates = map[int]bool{}
			for pid := range procs {
				candidates[pid] = true
			}
			return procs, candidates
		}
	}
	procs = readProcs()
	return procs, descendants(procs, s.self)
}

// attribute returns the Run's processes among procs: those in the shell's
// process group, carrying the Run's mark, attributed in an earlier round,
// and everything below them. This process is never among them.
func (s *sweeper) attribute(procs map[int]proc, candidates map[int]bool) map[int]bool {
	ours := map[int]bool{}
	for pid, p := range procs {
		if pid == s.self || (candidates != nil && !candidates[pid]) {
			continue
		}
		if s.seen[pid] || p.pgrp == s.shellPid || (!p.zombie && hasEnv(pid, s.mark)) {
			ours[pid] = true
		}
	}
	addBelow(procs, ours, s.self)
	return ours
}

// addBelow adds to set every process of procs that descends from one in
// it, except skip.
func addBelow(procs map[int]proc, set map[int]bool, skip int) {
	for grew := true; grew; {
		grew = false
		for pid, p := range procs {
			if !set[pid] && set[p.ppid] && pid != skip {
				set[pid], grew = true, true
			}
		}
	}
}

// stopAll sends SIGSTOP to every live process of ours. Stopping them all
// before killing any keeps a parent killed after its child from running
// between the two kills and acting on the child's death (a shell prints
// "Killed" into the call's output).
func stopAll(procs map[int]proc, ours map[int]bool) {
	for pid := range ours {
		if !procs[pid].zombie {
			_ = unix.Kill(pid, unix.SIGSTOP)
		}
	}
}

// kill sends SIGKILL to every live process of ours and remembers them all
// as seen. left counts the processes still to wait for: those killed, and
// zombies whose parent is not this process (that parent, killed too, reaps
// them or passes them to us); killed reports whether any signal was sent.
func (s *sweeper) kill(procs map[int]proc, ours map[int]bool) (left int, killed bool) {
	for pid := range ours {
		s.seen[pid] = true
		switch {
		case !procs[pid].zombie:
			_ = unix.Kill(pid, unix.SIGKILL)
			left++
			killed = true
		case procs[pid].ppid != s.self:
			left++
		}
	}
	return left, killed
}

// reap waits (without blocking) for this process's zombie children that
// are the Run's or sit in another session than the server's (orphans
// nobody else waits for); it returns how many could not be reaped yet.
func (s *sweeper) reap(procs map[int]proc, ours map[int]bool) (left int) {
	for pid, p := range procs {
		if p.ppid != s.self || !p.zombie || !(ours[pid] || p.sid != s.mySid) {
			continue
		}
		if got, err := unix.Wait4(pid, nil, unix.WNOHANG, nil); err == nil && got == 0 {
			left++
		}
	}
	return left
}

// descendants returns the pids below root.
func descendants(procs map[int]proc, root int) map[int]bool {
	children := map[int][]int{}
	for pid, p := range procs {
		children[p.ppid] = append(children[p.ppid], pid)
	}
	below := map[int]bool{}
	queue := []int{root}
	for len(queue) > 0 {
		pid := queue[0]
		queue = queue[1:]
		for _, c := range children[pid] {
			if !below[c] {
				below[c] = true
				queue = append(queue, c)
			}
		}
	}
	return below
}
