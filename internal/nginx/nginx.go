// Package nginx runs Debian's nginx in the foreground on a 127.0.0.1 port, for the tests
// and benchmarks that put it beside or in front of sno-iso serve: as an object store, a load
// balancer, or the peer a file server is measured against.
package nginx

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// ErrNotInstalled says there is no nginx binary.
var ErrNotInstalled = errors.New("nginx is not installed (Debian package nginx; scripts/install-deps installs it as root)")

// Binary is the nginx executable, or "" when it is not installed.
func Binary() string {
	if p, err := exec.LookPath("nginx"); err == nil {
		return p
	}
	if _, err := os.Stat("/usr/sbin/nginx"); err == nil {
		return "/usr/sbin/nginx"
	}
	return ""
}

// Server is a running nginx.
type Server struct {
	Port   int
	cmd    *exec.Cmd
	exited chan struct{}
}

// Start runs nginx with its files in dir, workers worker processes (1: the master process
// serves alone) and the http block's contents that config returns for the port to listen
// on. nginx cannot listen on port 0: a free port is picked and, if another process takes it
// first, another, up to five times.
func Start(dir string, workers int, config func(port int) string) (*Server, error) {
	bin := Binary()
	if bin == "" {
		return nil, ErrNotInstalled
	}
	for attempt := 0; ; attempt++ {
		port, err := freePort()
		if err != nil {
			return nil, err
		}
		conf := fmt.Sprintf(`daemon off;
%[3]s
pid %[1]s/nginx.pid;
error_log %[1]s/error.log warn;
events { worker_connections 1024; }
http {
	access_log off;
	client_body_temp_path %[1]s/body;
	proxy_temp_path %[1]s/proxy;
	fastcgi_temp_path %[1]s/fastcgi;
	uwsgi_temp_path %[1]s/uwsgi;
	scgi_temp_path %[1]s/scgi;
	%[2]s
}
`, dir, config(port), processes(workers))
		if err := os.WriteFile(filepath.Join(dir, "nginx.conf"), []byte(conf), 0o600); err != nil {
			return nil, err
		}
		os.Remove(filepath.Join(dir, "error.log"))
		s := &Server{Port: port, cmd: exec.Command(bin, "-p", dir, "-c", filepath.Join(dir, "nginx.conf")), exited: make(chan struct{})}
		var stderr bytes.Buffer
		s.cmd.Stderr = &stderr
		if err := s.cmd.Start(); err != nil {
			return nil, err
		}
		go func() { s.cmd.Wait(); close(s.exited) }()
		if s.waitListening() {
			return s, nil
		}
		s.Stop()
		errLog, _ := os.ReadFile(filepath.Join(dir, "error.log"))
		if attempt == 4 || !strings.Contains(string(errLog)+stderr.String(), "Address already in use") {
			return nil, fmt.Errorf("nginx did not start:\n%s%s", stderr.String(), errLog)
		}
	}
}

// processes configures nginx's processes. Workers of a master running as root would switch
// to an unprivileged user that cannot read the caller's private temporary directories.
func processes(workers int) string {
	if workers <= 1 {
		return "master_process off;"
	}
	conf := fmt.Sprintf("master_process on;\nworker_processes %d;", workers)
	if os.Geteuid() == 0 {
		conf += "\nuser root;"
	}
	return conf
}

// Pid is the nginx process's id (the master's, with several workers).
func (s *Server) Pid() int { return s.cmd.Process.Pid }

// Stop asks nginx to stop, and kills it after five seconds.
func (s *Server) Stop() {
	s.cmd.Process.Signal(syscall.SIGQUIT)
	select {
	case <-s.exited:
	case <-time.After(5 * time.Second):
		s.cmd.Process.Kill()
		<-s.exited
	}
}

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// waitListening reports whether the port accepts connections within 10 seconds, before
// nginx exits.
func (s *Server) waitListening() bool {
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-s.exited:
			return false
		default:
		}
		if c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", s.Port), time.Second); err == nil {
			c.Close()
			return true
		}
		time.Sleep(20 * time.Millisecond)
	}
	return false
}
