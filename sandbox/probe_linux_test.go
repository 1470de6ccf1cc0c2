package sandbox

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The escape suite's attack programs are this test binary run inside the
// sandbox with WARDEN_PROBE=1: `sandbox.test OP ARGS...`. Each op tries one
// thing, prints what happened and exits 0 if it worked, 1 if it was refused.
const probeEnv = "WARDEN_PROBE"

func init() {
	if os.Getenv(probeEnv) != "1" || len(os.Args) < 2 {
		return
	}
	err := probe(os.Args[1], os.Args[2:])
	if err != nil {
		fmt.Println("refused:", err)
		os.Exit(1)
	}
	fmt.Println("ok")
	os.Exit(0)
}

func probe(op string, args []string) error {
	arg := func(i int) string {
		if i < len(args) {
			return args[i]
		}
		return ""
	}
	switch op {
	case "dial-tcp":
		c, err := net.DialTimeout("tcp", arg(0), 2*time.Second)
		if err == nil {
			c.Close()
		}
		return err
	case "listen-tcp":
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err == nil {
			l.Close()
		}
		return err
	case "dial-mptcp":
		return rawConnect(unix.AF_INET, unix.SOCK_STREAM, unix.IPPROTO_MPTCP, arg(0))
	case "send-udp":
		c, err := net.Dial("udp", arg(0))
		if err != nil {
			return err
		}
		defer c.Close()
		_, err = c.Write([]byte("warden-escape"))
		return err
	case "socket":
		fam, _ := strconv.Atoi(arg(0))
		typ, _ := strconv.Atoi(arg(1))
		proto, _ := strconv.Atoi(arg(2))
		fd, err := unix.Socket(fam, typ, proto)
		if err == nil {
			unix.Close(fd)
		}
		return err
	case "socketpair":
		fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM, 0)
		if err == nil {
			unix.Close(fds[0])
			unix.Close(fds[1])
		}
		return err
	case "dial-unix": // a pathname or, with a leading @, an abstract socket
		c, err := net.DialTimeout("unix", arg(0), 2*time.Second)
		if err != nil {
			return err
		}
		defer c.Close()
		buf := make([]byte, 2)
		c.SetReadDeadline(time.Now().Add(2 * time.Second))
		_, err = c.Read(buf)
		return err
	case "unix-roundtrip": // listen on a socket and connect to it ourselves
		l, err := net.Listen("unix", arg(0))
		if err != nil {
			return err
		}
		defer l.Close()
		go func() {
			if c, err := l.Accept(); err == nil {
				c.Write([]byte("hi"))
				c.Close()
			}
		}()
		c, err := net.Dial("unix", arg(0))
		if err != nil {
			return err
		}
		defer c.Close()
		buf := make([]byte, 2)
		_, err = c.Read(buf)
		return err
	case "syscall":
		nr, _ := strconv.Atoi(arg(0))
		_, _, errno := unix.Syscall6(uintptr(nr), 0, 0, 0, 0, 0, 0)
		if errno == unix.EPERM || errno == unix.ENOSYS {
			return errno
		}
		return nil // any other answer means the kernel looked at it
	case "personality":
		v, _ := strconv.ParseUint(arg(0), 0, 32)
		_, _, errno := unix.Syscall(unix.SYS_PERSONALITY, uintptr(v), 0, 0)
		if errno != 0 {
			return errno
		}
		return nil
	case "x32-getpid":
		_, _, errno := unix.Syscall(0x40000000|unix.SYS_GETPID, 0, 0, 0)
		if errno != 0 {
			return errno
		}
		return nil
	case "getpid":
		_, _, errno := unix.Syscall(unix.SYS_GETPID, 0, 0, 0)
		if errno != 0 {
			return errno
		}
		return nil
	case "clone-newuser":
		pid, _, errno := unix.RawSyscall6(unix.SYS_CLONE, uintptr(unix.CLONE_NEWUSER|unix.SIGCHLD), 0, 0, 0, 0, 0)
		if errno != 0 {
			return errno
		}
		if pid == 0 {
			unix.Exit(0)
		}
		var ws unix.WaitStatus
		unix.Wait4(int(pid), &ws, 0, nil)
		return nil
	case "ptrace":
		pid, _ := strconv.Atoi(arg(0))
		if err := unix.PtraceAttach(pid); err != nil {
			return err
		}
		unix.PtraceDetach(pid)
		return nil
	case "io_uring":
		var params [120]byte
		fd, _, errno := unix.Syscall(unix.SYS_IO_URING_SETUP, 4, uintptr(unsafe.Pointer(&params[0])), 0)
		if errno != 0 {
			return errno
		}
		unix.Close(int(fd))
		return nil
	case "tiocsti":
		// A pty of our own stands in for a terminal: pushing input into it
		// must fail, writing to it must work.
		master, err := os.OpenFile("/dev/ptmx", os.O_RDWR, 0)
		if err != nil {
			return err
		}
		defer master.Close()
		unix.IoctlSetPointerInt(int(master.Fd()), unix.TIOCSPTLCK, 0)
		n, err := unix.IoctlGetInt(int(master.Fd()), unix.TIOCGPTN)
		if err != nil {
			return err
		}
		slave, err := os.OpenFile("/dev/pts/"+strconv.Itoa(n), os.O_RDWR|unix.O_NOCTTY, 0)
		if err != nil {
			return err
		}
		defer slave.Close()
		if arg(0) == "write" {
			_, err = slave.Write([]byte("x"))
			return err
		}
		c := byte('x')
		_, _, errno := unix.Syscall(unix.SYS_IOCTL, slave.Fd(), unix.TIOCSTI, uintptr(unsafe.Pointer(&c)))
		if errno != 0 {
			return errno
		}
		return nil
	case "fork":
		// Start N sleeping children; fail if any fork fails.
		n, _ := strconv.Atoi(arg(0))
		var procs []*exec.Cmd
		defer func() {
			for _, p := range procs {
				p.Process.Kill()
				p.Wait()
			}
		}()
		for i := range n {
			c := exec.Command("sleep", "30")
			if err := c.Start(); err != nil {
				return fmt.Errorf("fork %d: %w", i, err)
			}
			procs = append(procs, c)
		}
		return nil
	case "caps":
		b, err := os.ReadFile("/proc/self/status")
		if err != nil {
			return err
		}
		for _, l := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(l, "Cap") && !strings.HasSuffix(l, "0000000000000000") {
				return fmt.Errorf("capability left: %s", l)
			}
		}
		return nil
	case "kill":
		pid, _ := strconv.Atoi(arg(0))
		return unix.Kill(pid, syscall.SIGTERM)
	}
	if f, ok := mediationProbes[op]; ok {
		return f(args)
	}
	return fmt.Errorf("unknown probe %q", op)
}

func rawConnect(fam, typ, proto int, addr string) error {
	fd, err := unix.Socket(fam, typ, proto)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	ap, err := net.ResolveTCPAddr("tcp", addr)
	if err != nil {
		return err
	}
	sa := &unix.SockaddrInet4{Port: ap.Port}
	copy(sa.Addr[:], ap.IP.To4())
	return unix.Connect(fd, sa)
}
