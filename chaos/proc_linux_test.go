package chaos

import (
	"os/exec"
	"syscall"
)

// setPdeathsig makes the kernel SIGKILL the node when the test process dies (a test timeout panics past every
// cleanup). The signal survives the exec of `ip netns exec`.
func setPdeathsig(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
