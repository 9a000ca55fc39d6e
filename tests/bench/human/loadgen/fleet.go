package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "humanload/tabletopv1"
)

type Config struct {
	Gateway string
	// the games the tables play, in turn (table i plays Games[i % len(Games)])
	Games []string
	// seats per match of each game (every seat a person on its own stream)
	Seats map[string]int
	// spectators per match, each on a WatchMatch stream
	Spectators int
	// a seat's think time: ThinkMin plus an exponential draw, so the mean is ThinkMean
	ThinkMean, ThinkMin time.Duration
	RPCTimeout          time.Duration
	// persons sharing one connection (1: each its own, as players on their devices are)
	PersonsPerConn int
	// matches being set up at once (a lobby's arrivals, not a burst of thousands)
	SetupParallel int
	Seed          uint64
}

// Fleet keeps a number of tables in play: each table plays one game, match after match.
type Fleet struct {
	cfg    Config
	stats  *Stats
	pool   *Pool
	acting *gate
	setups chan struct{}

	mu     sync.Mutex
	root   context.Context
	tables []*table
	made   int
	extra  []*watchers
}

func NewFleet(ctx context.Context, cfg Config) *Fleet {
	return &Fleet{
		cfg:    cfg,
		stats:  NewStats(),
		pool:   NewPool(cfg.Gateway, cfg.PersonsPerConn),
		acting: newGate(),
		setups: make(chan struct{}, max(1, cfg.SetupParallel)),
		root:   ctx,
	}
}

func (f *Fleet) think(rng *rand.Rand) time.Duration {
	spread := f.cfg.ThinkMean - f.cfg.ThinkMin
	if spread <= 0 {
		return f.cfg.ThinkMin
	}
	return f.cfg.ThinkMin + time.Duration(rng.ExpFloat64()*float64(spread))
}

// countFailure files a failed call: RESOURCE_EXHAUSTED as a refusal, the rest as errors.
func (f *Fleet) countFailure(what string, err error) {
	code := status.Code(err)
	if code == codes.ResourceExhausted {
		f.stats.Refused(what)
		return
	}
	f.stats.Error(what + ": " + code.String())
}

// gate: whether seats act (an idle step holds matches and streams open, nobody acting).
type gate struct {
	mu sync.Mutex
	on bool
	ch chan struct{} // closed while on
}

func newGate() *gate { return &gate{ch: make(chan struct{})} }

func (g *gate) Set(on bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if on && !g.on {
		close(g.ch)
	} else if !on && g.on {
		g.ch = make(chan struct{})
	}
	g.on = on
}

func (g *gate) On() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.on
}

func (g *gate) Wait(ctx context.Context) bool {
	g.mu.Lock()
	ch := g.ch
	g.mu.Unlock()
	select {
	case <-ch:
		return true
	case <-ctx.Done():
		return false
	}
}

type table struct {
	f      *Fleet
	index  int
	game   string
	cancel context.CancelFunc
	done   chan struct{}
	ready  chan struct{} // closed once its first match is set up
	once   sync.Once

	mu      sync.Mutex
	current *match
}

func (t *table) run(ctx context.Context) {
	defer close(t.done)
	f := t.f
	rng := rand.New(rand.NewPCG(f.cfg.Seed, uint64(t.index)))
	for ctx.Err() == nil {
		m, first, err := f.setup(ctx, t.game)
		if err != nil {
			if ctx.Err() == nil {
				f.countFailure("setup", err)
			}
			sleep(ctx, time.Duration(500+rng.IntN(1000))*time.Millisecond)
			continue
		}
		t.mu.Lock()
		t.current = m
		t.mu.Unlock()
		t.once.Do(func() { close(t.ready) })
		over := m.play(ctx, rng, first)
		t.mu.Lock()
		t.current = nil
		t.mu.Unlock()
		m.close()
		if over {
			f.stats.MatchEnded()
		}
	}
}

func (t *table) match() *match {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.current
}

// setup creates a match as its people would: each person a player of its own (signed up
// first), the first seat creates it and sits at once, each other seat joins its free seat
// (a public table), each spectator joins as one; then every stream opens and shows its
// first view.
func (f *Fleet) setup(ctx context.Context, game string) (*match, *pb.GetLegalActionsReply, error) {
	select {
	case f.setups <- struct{}{}:
	case <-ctx.Done():
		return nil, nil, ctx.Err()
	}
	defer func() { <-f.setups }()
	began := time.Now()
	seats := f.cfg.Seats[game]
	players := make([]string, seats)
	for i := range players {
		players[i] = fmt.Sprintf("p%d", i+1)
	}
	streamsCtx, cancel := context.WithCancel(ctx)
	m := &match{f: f, game: game, cancel: cancel}
	fail := func(err error) (*match, *pb.GetLegalActionsReply, error) {
		m.close()
		return nil, nil, err
	}
	call := func() (context.Context, context.CancelFunc) {
		return context.WithTimeout(ctx, f.cfg.RPCTimeout)
	}
	creator, err := f.pool.Get()
	if err != nil {
		return fail(err)
	}
	var opened *pb.OpenMatchReply
	callCtx, done := call()
	signed, err := creator.signedIn(callCtx)
	if err == nil {
		var created *pb.OpenMatchReply
		created, err = creator.gw.CreateMatch(signed, &pb.OpenMatchRequest{
			Game: game, Players: players, CommandId: commandID(), Seat: players[0],
		})
		opened = created
	}
	done()
	if err != nil {
		f.pool.Put(creator)
		return fail(err)
	}
	m.id = opened.GetMatchId()
	m.add(players[0], creator, opened.GetSeatToken())
	join := func(request *pb.JoinMatchRequest) error {
		who, err := f.pool.Get()
		if err != nil {
			return err
		}
		callCtx, done := call()
		signed := callCtx // a spectator needs no player (a public table)
		if !request.GetSpectate() {
			signed, err = who.signedIn(callCtx)
		}
		var joined *pb.JoinMatchReply
		if err == nil {
			joined, err = who.gw.JoinMatch(signed, request)
		}
		done()
		if err != nil {
			f.pool.Put(who)
			return err
		}
		m.add(joined.GetSeat(), who, joined.GetToken())
		return nil
	}
	for _, seat := range players[1:] {
		if err := join(&pb.JoinMatchRequest{MatchId: m.id, Seat: seat}); err != nil {
			return fail(err)
		}
	}
	for range f.cfg.Spectators {
		if err := join(&pb.JoinMatchRequest{MatchId: m.id, Spectate: true}); err != nil {
			return fail(err)
		}
	}
	if err := m.open(streamsCtx); err != nil {
		return fail(err)
	}
	for _, s := range m.streams {
		if _, ok := s.waitVersion(ctx, 1, f.cfg.RPCTimeout); !ok {
			return fail(status.Error(codes.DeadlineExceeded, "no first view"))
		}
	}
	f.stats.Ready(began, time.Now())
	return m, opened.GetLegalActions(), nil
}

type EnsureReply struct {
	Matches     int     `json:"matches"`
	Ready       int     `json:"ready"`
	Streams     int64   `json:"streams"`
	Connections int     `json:"connections"`
	Seconds     float64 `json:"seconds"`
}

// Ensure keeps n tables in play (new ones start setting up, extra ones leave) and waits,
// up to limit, until every table has its first match set up.
func (f *Fleet) Ensure(n int, limit time.Duration) EnsureReply {
	began := time.Now()
	f.mu.Lock()
	for len(f.tables) < n {
		ctx, cancel := context.WithCancel(f.root)
		t := &table{
			f: f, index: f.made, game: f.cfg.Games[f.made%len(f.cfg.Games)], cancel: cancel,
			done: make(chan struct{}), ready: make(chan struct{}),
		}
		f.made++
		f.tables = append(f.tables, t)
		go t.run(ctx)
	}
	leaving := append([]*table{}, f.tables[n:]...)
	f.tables = f.tables[:n]
	tables := append([]*table{}, f.tables...)
	f.mu.Unlock()
	for _, t := range leaving {
		t.cancel()
	}
	for _, t := range leaving {
		<-t.done
	}
	deadline := time.NewTimer(limit)
	defer deadline.Stop()
	ready := 0
wait:
	for _, t := range tables {
		select {
		case <-t.ready:
			ready++
		case <-deadline.C:
			break wait
		}
	}
	return EnsureReply{
		Matches: len(tables), Ready: ready, Streams: streamsOpen.Load(),
		Connections: f.pool.Open(), Seconds: time.Since(began).Seconds(),
	}
}
