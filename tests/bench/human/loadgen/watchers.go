package main

import (
	"context"
	"time"

	pb "humanload/tabletopv1"
)

// watchers are extra spectators over the tables' current matches, opened as a batch: what one more open watch stream costs each process (with its own connection, or
// many to a connection) is measured by opening them with nobody acting.
type watchers struct {
	pool   *Pool
	cancel context.CancelFunc
	people []*person
	dead   []chan struct{}
}

type WatchersReply struct {
	Open        int     `json:"open"`
	Failed      int     `json:"failed"`
	Streams     int64   `json:"streams"`
	Connections int     `json:"connections"`
	Seconds     float64 `json:"seconds"`
}

// Watchers opens count more spectators spread over the tables' matches, perConn to a
// connection, each holding its first view before this returns; count 0 closes them all.
// Batches add up, so each batch's cost is read with nothing freed before it.
func (f *Fleet) Watchers(count, perConn int) WatchersReply {
	began := time.Now()
	f.mu.Lock()
	tables := append([]*table{}, f.tables...)
	var closing []*watchers
	if count == 0 {
		closing, f.extra = f.extra, nil
	}
	f.mu.Unlock()
	for _, w := range closing {
		w.close()
	}
	reply := WatchersReply{}
	if count > 0 && len(tables) > 0 {
		ctx, cancel := context.WithCancel(f.root)
		w := &watchers{pool: NewPool(f.cfg.Gateway, perConn), cancel: cancel}
		results := make(chan bool, count)
		for i := range count {
			m := tables[i%len(tables)].match()
			go func() { results <- m != nil && w.open(ctx, f, m) }()
		}
		for range count {
			if <-results {
				reply.Open++
			} else {
				reply.Failed++
			}
		}
		f.mu.Lock()
		f.extra = append(f.extra, w)
		f.mu.Unlock()
		reply.Connections = w.pool.Open()
	}
	reply.Streams = streamsOpen.Load()
	reply.Seconds = time.Since(began).Seconds()
	return reply
}

func (w *watchers) open(ctx context.Context, f *Fleet, m *match) bool {
	who, err := w.pool.Get()
	if err != nil {
		f.stats.Error("watcher: " + err.Error())
		return false
	}
	callCtx, done := context.WithTimeout(ctx, f.cfg.RPCTimeout)
	joined, err := who.gw.JoinMatch(callCtx, &pb.JoinMatchRequest{MatchId: m.id, Spectate: true})
	done()
	if err != nil {
		w.pool.Put(who)
		f.countFailure("watcher join", err)
		return false
	}
	call, err := who.gw.WatchMatch(withToken(ctx, joined.GetToken()), &pb.WatchMatchRequest{MatchId: m.id})
	if err != nil {
		w.pool.Put(who)
		f.countFailure("watcher", err)
		return false
	}
	first := make(chan bool, 1)
	dead := make(chan struct{})
	go func() {
		streamsOpen.Add(1)
		defer streamsOpen.Add(-1)
		defer close(dead)
		seen := false
		for {
			if _, err := call.Recv(); err != nil {
				if !seen {
					first <- false
				}
				return
			}
			f.stats.ViewReceived()
			if !seen {
				seen = true
				first <- true
			}
		}
	}()
	timer := time.NewTimer(f.cfg.RPCTimeout)
	defer timer.Stop()
	ok := false
	select {
	case ok = <-first:
	case <-timer.C:
	}
	f.mu.Lock() // the batch's lists are appended to from many goroutines
	w.people = append(w.people, who)
	w.dead = append(w.dead, dead)
	f.mu.Unlock()
	if !ok {
		f.stats.Error("watcher: no first view")
	}
	return ok
}

func (w *watchers) close() {
	w.cancel()
	for _, dead := range w.dead {
		<-dead
	}
	for _, who := range w.people {
		w.pool.Put(who)
	}
}
