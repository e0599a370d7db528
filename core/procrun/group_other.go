//go:build !unix

package procrun

import "os/exec"

// killGroup keeps exec's default cancellation (kill the process) where
// process groups are not available.
func killGroup(*exec.Cmd) {}

// killGroupNow has no group to kill where process groups are not available.
func killGroupNow(*exec.Cmd) {}
