// humanload: matches played at human pace through Tabletop's gateway, driven step by
// step by its caller (tests/bench/human/generator.py) over stdin and stdout.
//
// Each line on stdin is one JSON command; each gets one JSON line back on stdout:
//
//	{"cmd": "matches", "count": N, "wait_s": S}  keep N tables in play; wait until set up
//	{"cmd": "acting", "on": true}                seats act (false: they hold, streams open)
//	{"cmd": "watchers", "count": K, "per_conn": P}  K more spectators (0: close all of them)
//	{"cmd": "mark"}                              open a measured window
//	{"cmd": "collect"}                           the window's samples and counters so far
//	{"cmd": "status"}                            streams, connections, the generator's memory
//	{"cmd": "quit"}                              leave every match and exit
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"syscall"
	"time"
)

type command struct {
	Cmd     string  `json:"cmd"`
	Count   int     `json:"count"`
	WaitS   float64 `json:"wait_s"`
	On      bool    `json:"on"`
	PerConn int     `json:"per_conn"`
}

type Status struct {
	Matches     int    `json:"matches"`
	Streams     int64  `json:"streams"`
	Connections int    `json:"connections"`
	Goroutines  int    `json:"goroutines"`
	HeapBytes   uint64 `json:"heap_bytes"`
	SysBytes    uint64 `json:"sys_bytes"`
}

func (f *Fleet) Status() Status {
	var mem runtime.MemStats
	runtime.ReadMemStats(&mem)
	f.mu.Lock()
	matches := len(f.tables)
	extra := 0
	for _, w := range f.extra {
		extra += w.pool.Open()
	}
	f.mu.Unlock()
	return Status{
		Matches: matches, Streams: streamsOpen.Load(), Connections: f.pool.Open() + extra,
		Goroutines: runtime.NumGoroutine(), HeapBytes: mem.HeapInuse, SysBytes: mem.Sys,
	}
}

func parseSeats(text string) (map[string]int, []string, error) {
	seats := map[string]int{}
	var games []string
	for _, part := range strings.Split(text, ",") {
		name, count, ok := strings.Cut(strings.TrimSpace(part), "=")
		n, err := strconv.Atoi(count)
		if !ok || err != nil || n < 1 || n > 8 || name == "" {
			return nil, nil, fmt.Errorf("-seats takes game=N,... with 1 <= N <= 8, not %q", part)
		}
		seats[name] = n
		games = append(games, name)
	}
	return seats, games, nil
}

// raiseFileLimit: one connection per person means thousands of sockets.
func raiseFileLimit() {
	var limit syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_NOFILE, &limit) == nil && limit.Cur < limit.Max {
		limit.Cur = limit.Max
		_ = syscall.Setrlimit(syscall.RLIMIT_NOFILE, &limit)
	}
}

func main() {
	gateway := flag.String("gateway", "127.0.0.1:50050", "the gateway's gRPC address")
	seats := flag.String("seats", "crashland=1,drillit=2,imperial_miners=2,dungeon_drop=2",
		"the games played in turn, with the seats of each")
	spectators := flag.Int("spectators", 1, "spectators per match")
	thinkMean := flag.Duration("think-mean", 10*time.Second, "a seat's mean think time")
	thinkMin := flag.Duration("think-min", time.Second, "a seat's shortest think time")
	rpcTimeout := flag.Duration("rpc-timeout", 15*time.Second, "the longest wait for an answer or a view")
	perConn := flag.Int("persons-per-conn", 1, "persons sharing one connection")
	setupParallel := flag.Int("setup-parallel", 16, "matches set up at once")
	seed := flag.Uint64("seed", 1, "seed of the think times, the actions and the command ids")
	profile := flag.String("cpuprofile", "", "write the generator's own CPU profile here (go tool pprof)")
	flag.Parse()
	if *profile != "" {
		out, err := os.Create(*profile)
		if err == nil {
			err = pprof.StartCPUProfile(out)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		defer pprof.StopCPUProfile()
	}
	seatsOf, games, err := parseSeats(*seats)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	if *thinkMin > *thinkMean || *spectators < 0 || *spectators > 50 {
		fmt.Fprintln(os.Stderr, "need think-min <= think-mean and 0 <= spectators <= 50")
		os.Exit(2)
	}
	raiseFileLimit()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	fleet := NewFleet(ctx, Config{
		Gateway: *gateway, Games: games, Seats: seatsOf, Spectators: *spectators,
		ThinkMean: *thinkMean, ThinkMin: *thinkMin, RPCTimeout: *rpcTimeout,
		PersonsPerConn: *perConn, SetupParallel: *setupParallel, Seed: *seed,
	})
	in := bufio.NewScanner(os.Stdin)
	out := json.NewEncoder(os.Stdout)
	for in.Scan() {
		var c command
		if err := json.Unmarshal(in.Bytes(), &c); err != nil {
			_ = out.Encode(map[string]string{"error": err.Error()})
			continue
		}
		var reply any
		switch c.Cmd {
		case "matches":
			wait := time.Duration(c.WaitS * float64(time.Second))
			if wait <= 0 {
				wait = 10 * time.Minute
			}
			reply = fleet.Ensure(max(0, c.Count), wait)
		case "acting":
			fleet.acting.Set(c.On)
			reply = map[string]bool{"acting": c.On}
		case "watchers":
			reply = fleet.Watchers(max(0, c.Count), max(1, c.PerConn))
		case "mark":
			fleet.stats.Mark()
			reply = map[string]bool{"marked": true}
		case "collect":
			reply = fleet.stats.Collect()
		case "status":
			reply = fleet.Status()
		case "quit":
			fleet.Watchers(0, 1)
			fleet.Ensure(0, time.Second)
			_ = out.Encode(map[string]bool{"quit": true})
			return
		default:
			reply = map[string]string{"error": "unknown command " + strconv.Quote(c.Cmd)}
		}
		if err := out.Encode(reply); err != nil {
			return
		}
	}
	// stdin closed: the caller is gone
	fleet.Ensure(0, time.Second)
}
