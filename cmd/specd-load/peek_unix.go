//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package main

import (
	"net"
	"syscall"
)

// peerClosed tells, without waiting, whether the server has closed (or
// reset) the idle connection c, or sent bytes nobody asked for: either way
// c cannot carry a request. It peeks at the socket (MSG_PEEK, nothing is
// consumed); a connection it cannot peek at counts as open.
func peerClosed(c net.Conn) bool {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return false
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	closed := false
	err = rc.Read(func(fd uintptr) bool {
		var b [1]byte
		n, _, err := syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		switch {
		case err == syscall.EAGAIN || err == syscall.EWOULDBLOCK || err == syscall.EINTR:
		case err != nil, n == 0: // reset, or the end of the stream
			closed = true
		default: // n > 0: bytes before any request
			closed = true
		}
		return true // never wait for readiness
	})
	return closed || err != nil
}
