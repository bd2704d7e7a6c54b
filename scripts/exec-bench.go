// Transactions per second of MULTI, GET, SET, EXEC against a Redis
// server: the work of scripts/script-bench's script, as a transaction
// (`go run` of this one file, standard library only; it is no part of
// the Rust build). redis-benchmark sends one command per request, so it
// cannot send a transaction.
//
//	go run exec-bench.go -p PORT [-n TRANSACTIONS] [-c CLIENTS] [-r KEYS] [-P DEPTH] [-d BYTES]
//
// Each of CLIENTS connections sends DEPTH transactions at a time on keys
// key:N (N random below KEYS), reads their replies, and goes on until
// TRANSACTIONS have been sent in all; the last line printed is the rate.
// Exits 1 on an error reply or a broken connection.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"math/rand"
	"net"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

func main() {
	port := flag.Int("p", 6379, "port")
	total := flag.Int64("n", 100000, "transactions")
	clients := flag.Int("c", 50, "connections")
	keys := flag.Int("r", 100000, "keys")
	depth := flag.Int64("P", 1, "transactions sent at a time by a connection")
	size := flag.Int("d", 16, "value bytes")
	flag.Parse()
	value := make([]byte, *size)
	for i := range value {
		value[i] = 'v'
	}
	var sent atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, *clients)
	start := time.Now()
	for c := 0; c < *clients; c++ {
		wg.Add(1)
		go func(seed int64) {
			defer wg.Done()
			if err := client(*port, seed, &sent, *total, *depth, *keys, value); err != nil {
				errs <- err
			}
		}(int64(c))
	}
	wg.Wait()
	elapsed := time.Since(start).Seconds()
	close(errs)
	for err := range errs {
		fmt.Fprintln(os.Stderr, "exec-bench:", err)
		os.Exit(1)
	}
	fmt.Printf("%.0f\n", float64(*total)/elapsed)
}

// client sends transactions, depth at a time, until total were sent.
func client(port int, seed int64, sent *atomic.Int64, total, depth int64, keys int, value []byte) error {
	conn, err := net.Dial("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		return err
	}
	defer conn.Close()
	r := bufio.NewReader(conn)
	w := bufio.NewWriter(conn)
	random := rand.New(rand.NewSource(seed))
	for {
		n := depth
		if after := sent.Add(depth); after > total {
			n = depth - (after - total)
		}
		if n <= 0 {
			return nil
		}
		for i := int64(0); i < n; i++ {
			key := "key:" + strconv.Itoa(random.Intn(keys))
			fmt.Fprintf(w, "*1\r\n$5\r\nMULTI\r\n*2\r\n$3\r\nGET\r\n$%d\r\n%s\r\n*3\r\n$3\r\nSET\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n*1\r\n$4\r\nEXEC\r\n",
				len(key), key, len(key), key, len(value), value)
		}
		if err := w.Flush(); err != nil {
			return err
		}
		// +OK, +QUEUED, +QUEUED, then EXEC's array of GET's and SET's replies.
		for i := int64(0); i < 4*n; i++ {
			if err := skipReply(r); err != nil {
				return err
			}
		}
	}
}

// skipReply reads one RESP2 reply, failing on an error reply.
func skipReply(r *bufio.Reader) error {
	line, err := r.ReadString('\n')
	if err != nil {
		return err
	}
	if len(line) < 3 {
		return fmt.Errorf("short reply %q", line)
	}
	switch line[0] {
	case '+', ':':
		return nil
	case '-':
		return fmt.Errorf("error reply: %s", line[:len(line)-2])
	case '$', '*':
		n, err := strconv.Atoi(line[1 : len(line)-2])
		if err != nil {
			return fmt.Errorf("bad length in %q", line)
		}
		if line[0] == '$' {
			if n >= 0 {
				_, err = r.Discard(n + 2)
			}
			return err
		}
		for i := 0; i < n; i++ {
			if err := skipReply(r); err != nil {
				return err
			}
		}
		return nil
	}
	return fmt.Errorf("unknown reply %q", line)
}
