package threadprio

import (
	"errors"

	"golang.org/x/sys/unix"
)

// Lower moves the calling thread steps nice values below its priority, to 19 at most, and returns the thread's
// nice value; raising a nice value needs no privilege. The caller must hold the thread (runtime.LockOSThread)
// and never unlock it: a goroutine that ends locked takes its thread with it, where an unlocked thread would go
// back to running other goroutines at the lowered priority. Threads the runtime starts from a locked thread
// come from its template thread, so they do not inherit the priority.
//
// Lower refuses the main thread (ErrMainThread): its id is the process's, so ps and top would show the whole
// process at the lower priority, and Go never ends that thread, so it would stay there.
func Lower(steps int) (int, error) {
	if unix.Gettid() == unix.Getpid() {
		return 0, ErrMainThread
	}
	cur, err := Nice()
	if err != nil {
		return 0, err
	}
	if cur >= 19 {
		return cur, errors.New("lower a thread's priority: already at the lowest")
	}
	nice := min(cur+steps, 19)
	if err := unix.Setpriority(unix.PRIO_PROCESS, unix.Gettid(), nice); err != nil {
		return cur, err
	}
	return nice, nil
}

// Nice is the calling thread's nice value.
func Nice() (int, error) {
	prio, err := unix.Getpriority(unix.PRIO_PROCESS, unix.Gettid()) // the raw system call: 20 - nice
	return 20 - prio, err
}
