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
		pid, err := strconv.Atoi(name)
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + name + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid pgrp session ...; comm may hold spaces and parentheses
		i := bytes.LastIndexByte(b, ')')
		if i < 0 {
			continue
		}
		f := bytes.Fields(b[i+1:])
		if len(f) < 4 {
			continue
		}
		ppid, _ := strconv.Atoi(string(f[1]))
		pgrp, _ := strconv.Atoi(string(f[2]))
		sid, _ := strconv.Atoi(string(f[3]))
		procs[pid] = proc{ppid: ppid, pgrp: pgrp, sid: sid, zombie: string(f[0]) == "Z" || string(f[0]) == "X"}
	}
	return procs
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
// its parent was being killed is found too.
//
// Only processes attributed to the Run are reaped, plus zombie children in
// a session other than the server's: the server never starts a process in a
// new session, so those are orphans nobody else waits for. Children that
// os/exec waits for (other calls' shells, git) are never reaped here.
func sweep(shellPid int, runID string) {
	self := os.Getpid()
	mySid, _ := unix.Getsid(0)
	onlyBeneath := becomeSubreaper()
	mark := runIDVar + "=" + runID
	deadline := time.Now().Add(sweepLimit)
	seen := map[int]bool{} // attributed in an earlier round: a zombie's environment is gone
	for {
		procs := readProcs()
		var candidates map[int]bool
		if onlyBeneath {
			candidates = descendants(procs, self)
		}
		ours := map[int]bool{}
		for pid, p := range procs {
			if pid == self || (candidates != nil && !candidates[pid]) {
				continue
			}
			if seen[pid] || p.pgrp == shellPid || (!p.zombie && hasEnv(pid, mark)) {
				ours[pid] = true
			}
		}
		for grew := true; grew; { // and everything below them
			grew = false
			for pid, p := range procs {
				if !ours[pid] && ours[p.ppid] && pid != self {
					ours[pid], grew = true, true
				}
			}
		}
		left := 0
		for pid := range ours {
			seen[pid] = true
			if !procs[pid].zombie {
				_ = unix.Kill(pid, unix.SIGKILL)
				left++
			} else if procs[pid].ppid != self {
				left++ // its parent, killed too, reaps it or passes it to us
			}
		}
		for pid, p := range procs {
			if p.ppid != self || !p.zombie || !(ours[pid] || p.sid != mySid) {
				continue
			}
			if got, err := unix.Wait4(pid, nil, unix.WNOHANG, nil); err == nil && got == 0 {
				left++
			}
		}
		if left == 0 || time.Now().After(deadline) {
			return
		}
		time.Sleep(5 * time.Millisecond) // SIGKILL is delivered asynchronously
	}
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
