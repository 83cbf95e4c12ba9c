//go:build linux

package main

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Header burst: 300 connections each start a request and send ~1 MB of header lines, 1 KiB
// every 10 ms, as the attacker did.
const (
	burstConnections = 300
	burstHeaderBytes = 1 << 20
	burstLine        = 1 << 10
	burstPace        = 10 * time.Millisecond
)

// benchHeaderBurst measures `sno-iso serve`'s resident memory before a burst of slow,
// oversized request headers, at its peak and after it: the server refuses each header past
// its cap and its memory must go back down once the connections are gone.
func benchHeaderBurst(sno, tmp string) {
	nodes := filepath.Join(tmp, "burst-nodes")
	if err := os.MkdirAll(nodes, 0o755); err != nil {
		fatal(err)
	}
	server, base := startServer(sno, smallISO(sno, tmp), nodes, "--open")
	pid := server.Process.Pid
	before := currentRSS(pid)
	start := time.Now()
	var wg sync.WaitGroup
	var mu sync.Mutex
	answers := map[string]int{}
	for range burstConnections {
		wg.Add(1)
		go func() {
			defer wg.Done()
			answer := slowHeader(strings.TrimPrefix(base, "http://"))
			mu.Lock()
			answers[answer]++
			mu.Unlock()
		}()
	}
	wg.Wait()
	burst := time.Since(start)
	after := []int64{currentRSS(pid)}
	for _, wait := range []time.Duration{5 * time.Second, 30 * time.Second} {
		time.Sleep(wait - time.Since(start.Add(burst)))
		after = append(after, currentRSS(pid))
	}
	fmt.Printf("| `sno-iso serve`, %d connections each sending ~%d MB of header slowly | %v, answers %v | RSS before %d MiB, "+
		"peak %d MiB; after: at once %d, 5 s %d, 30 s %d MiB |\n", burstConnections, burstHeaderBytes>>20,
		burst.Round(time.Millisecond), answers, before>>10, peakRSS(pid)>>10, after[0]>>10, after[1]>>10, after[2]>>10)
	server.Process.Signal(syscall.SIGTERM)
	server.Wait()
}

// slowHeader sends a request whose header grows by burstLine every burstPace until
// burstHeaderBytes or until the server answers or hangs up; it returns the answer's status
// line, or how the connection ended.
func slowHeader(addr string) string {
	conn, err := net.DialTimeout("tcp", addr, 10*time.Second)
	if err != nil {
		return "dial: " + err.Error()
	}
	defer conn.Close()
	answer := make(chan string, 1)
	go func() {
		line, err := bufio.NewReader(conn).ReadString('\n')
		if err != nil {
			answer <- "closed without an answer"
			return
		}
		answer <- strings.TrimSpace(line)
	}()
	fmt.Fprintf(conn, "GET /rootfs.img HTTP/1.1\r\nHost: %s\r\n", addr)
	line := "X-Filler: " + strings.Repeat("a", burstLine-len("X-Filler: \r\n")) + "\r\n"
	for sent := 0; sent < burstHeaderBytes; sent += burstLine {
		select {
		case a := <-answer:
			return a
		case <-time.After(burstPace):
		}
		if _, err := conn.Write([]byte(line)); err != nil {
			break
		}
	}
	conn.SetReadDeadline(time.Now().Add(15 * time.Second))
	return <-answer
}
