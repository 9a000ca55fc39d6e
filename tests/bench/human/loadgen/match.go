package main

import (
	"context"
	cryptorand "crypto/rand"
	"encoding/hex"
	"errors"
	"io"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	pb "humanload/tabletopv1"
)

// A match as its people live it: each seat on its PlayMatch stream (its actions in, its
// acknowledgements and views out, as a game client holds one socket), each spectator on a
// WatchMatch stream. A seat whose turn it is thinks, then plays a random legal action; it
// acts again only once its stream has shown it the view of its last action.

type arrival struct {
	version uint64
	at      time.Time
}

// arrivalsKept is how many view arrivals a stream remembers: enough for an acknowledgement
// that comes after its view (a spectator may see an action before its actor's ack lands).
const arrivalsKept = 8

type stream struct {
	m      *match
	index  int
	seat   string // empty for a spectator
	who    *person
	token  string
	dead   chan struct{}       // closed once the stream has ended
	notify chan struct{}       // a newer view came (read by the seat's actor)
	answer chan *pb.PlayUpdate // acks and refusals, for the seat's actor
	play   grpc.BidiStreamingClient[pb.PlayRequest, pb.PlayUpdate]
	opened bool   // its call was started (dead will be closed)
	sent   uint64 // ids of the seat's requests (its actor's only)

	// guarded by m.mu
	version  uint64
	next     *pb.NextStep
	finished bool
	arrivals [arrivalsKept]arrival
	arrived  int
}

// arrivalOf is when the first view with at least version came (false: not yet, or no
// longer remembered). Called with m.mu held.
func (s *stream) arrivalOf(version uint64) (time.Time, bool) {
	if s.version < version {
		return time.Time{}, false
	}
	oldest := max(0, s.arrived-arrivalsKept)
	for i := oldest; i < s.arrived; i++ {
		a := s.arrivals[i%arrivalsKept]
		if a.version >= version {
			if i == oldest && s.arrived > arrivalsKept {
				return time.Time{}, false // an earlier one may have been forgotten
			}
			return a.at, true
		}
	}
	return time.Time{}, false
}

// An acknowledged action whose view not every stream of its match has shown yet.
type pendingAction struct {
	version uint64
	sent    time.Time
	actor   int
	seen    uint64 // bit i: stream i has shown a view with the action's version
}

// pendingKept is how long an action waits for the match's other streams to show it.
const pendingKept = 60 * time.Second

type match struct {
	f      *Fleet
	id     string
	game   string
	cancel context.CancelFunc // ends every stream of the match

	mu      sync.Mutex
	streams []*stream
	pending []*pendingAction
}

var streamsOpen atomic.Int64

func withToken(ctx context.Context, token string) context.Context {
	return metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+token)
}

func (m *match) add(seat string, who *person, token string) *stream {
	s := &stream{
		m: m, index: len(m.streams), seat: seat, who: who, token: token,
		dead: make(chan struct{}), notify: make(chan struct{}, 1),
		answer: make(chan *pb.PlayUpdate, 4),
	}
	m.streams = append(m.streams, s)
	return s
}

// open starts every stream of the match (seats: PlayMatch with views in their acks;
// spectators: WatchMatch).
func (m *match) open(ctx context.Context) error {
	for _, s := range m.streams {
		streamCtx := withToken(ctx, s.token)
		watch := &pb.WatchMatchRequest{MatchId: m.id, Viewer: s.seat}
		s.opened = true
		if s.seat == "" {
			call, err := s.who.gw.WatchMatch(streamCtx, watch)
			if err != nil {
				close(s.dead)
				return err
			}
			go m.read(s, func() (*pb.MatchView, *pb.PlayUpdate, error) {
				view, err := call.Recv()
				return view, nil, err
			})
			continue
		}
		call, err := s.who.gw.PlayMatch(streamCtx)
		if err == nil {
			err = call.Send(&pb.PlayRequest{
				Kind:          &pb.PlayRequest_Watch{Watch: watch},
				ViewsWithAcks: true,
			})
		}
		if err != nil {
			close(s.dead)
			return err
		}
		s.play = call
		go m.read(s, func() (*pb.MatchView, *pb.PlayUpdate, error) {
			update, err := call.Recv()
			return nil, update, err
		})
	}
	return nil
}

func (m *match) read(s *stream, recv func() (*pb.MatchView, *pb.PlayUpdate, error)) {
	streamsOpen.Add(1)
	defer streamsOpen.Add(-1)
	defer close(s.dead)
	for {
		view, update, err := recv()
		if err != nil {
			m.ended(s, err)
			return
		}
		if view != nil {
			m.onView(s, view)
			continue
		}
		if v := update.GetView(); v != nil {
			m.onView(s, v)
		}
		if v := update.GetViewWithAck(); v != nil {
			m.onView(s, v)
		}
		if update.GetAck() != nil || update.GetRefused() != nil {
			select {
			case s.answer <- update:
			default: // nobody asked any more (the actor gave up on it)
			}
		}
	}
}

func (m *match) ended(s *stream, err error) {
	m.mu.Lock()
	finished := s.finished
	m.mu.Unlock()
	code := status.Code(err)
	switch {
	case errors.Is(err, io.EOF):
		if !finished {
			m.f.stats.Error("stream: ended before the match")
		}
	case code == codes.Canceled, errors.Is(err, context.Canceled):
		// we left
	case code == codes.ResourceExhausted:
		m.f.stats.Refused("stream")
	default:
		m.f.stats.Error("stream: " + code.String())
	}
}

func (m *match) onView(s *stream, view *pb.MatchView) {
	now := time.Now()
	m.f.stats.ViewReceived()
	m.mu.Lock()
	if view.GetVersion() > s.version {
		s.version = view.GetVersion()
		s.next = view.GetNext()
		s.finished = view.GetStatus() == pb.MatchStatus_MATCH_STATUS_FINISHED
		s.arrivals[s.arrived%arrivalsKept] = arrival{s.version, now}
		s.arrived++
		bit := uint64(1) << s.index
		for _, p := range m.pending {
			if p.actor != s.index && p.seen&bit == 0 && p.version <= s.version {
				p.seen |= bit
				m.f.stats.OtherView(p.sent, now)
			}
		}
		m.prune(now)
	}
	m.mu.Unlock()
	select {
	case s.notify <- struct{}{}:
	default:
	}
}

// acked notes an acknowledged action; the match's other streams that already show its
// version are counted at once, the rest when they do. Called without m.mu.
func (m *match) acked(actor *stream, version uint64, sent time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	p := &pendingAction{version: version, sent: sent, actor: actor.index, seen: 1 << actor.index}
	for _, s := range m.streams {
		if s == actor || s.version < version {
			continue
		}
		p.seen |= 1 << s.index
		if at, ok := s.arrivalOf(version); ok {
			m.f.stats.OtherView(sent, at)
		} else {
			m.f.stats.OthersLost()
		}
	}
	m.pending = append(m.pending, p)
	m.prune(sent)
}

// prune drops actions every stream has shown, and those waited for longer than
// pendingKept (each stream that never showed one counts as a lost view).
func (m *match) prune(now time.Time) {
	all := uint64(1)<<len(m.streams) - 1
	kept := m.pending[:0]
	for _, p := range m.pending {
		switch {
		case p.seen == all:
		case now.Sub(p.sent) > pendingKept:
			for i := range m.streams {
				if p.seen&(1<<i) == 0 {
					m.f.stats.OthersLost()
				}
			}
		default:
			kept = append(kept, p)
		}
	}
	clear(m.pending[len(kept):])
	m.pending = kept
}

// state is what the stream shows now: its version, whether it is the seat's turn, and
// whether the match is over.
func (m *match) state(s *stream) (version uint64, turn, finished bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return s.version, slices.Contains(s.next.GetPlayers(), s.seat), s.finished
}

// waitNewer waits until the stream shows a version above version (false: it ended, or ctx).
func (s *stream) waitNewer(ctx context.Context, version uint64, limit time.Duration) bool {
	timer := time.NewTimer(limit)
	defer timer.Stop()
	for {
		s.m.mu.Lock()
		current := s.version
		s.m.mu.Unlock()
		if current > version {
			return true
		}
		select {
		case <-s.notify:
		case <-s.dead:
			return false
		case <-ctx.Done():
			return false
		case <-timer.C:
			return false
		}
	}
}

// waitVersion is when the stream showed version or newer (false: not within limit).
func (s *stream) waitVersion(ctx context.Context, version uint64, limit time.Duration) (time.Time, bool) {
	if version > 0 && !s.waitNewer(ctx, version-1, limit) {
		return time.Time{}, false
	}
	s.m.mu.Lock()
	defer s.m.mu.Unlock()
	at, ok := s.arrivalOf(version)
	return at, ok
}

func sleep(ctx context.Context, d time.Duration) bool {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// play runs every seat's actor until the match is over (true) or it is left (false).
func (m *match) play(ctx context.Context, rng *rand.Rand, first *pb.GetLegalActionsReply) bool {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var seats []*stream
	for _, s := range m.streams {
		if s.seat != "" {
			seats = append(seats, s)
		}
	}
	results := make(chan bool, len(seats))
	for i, s := range seats {
		actorRng := rand.New(rand.NewPCG(rng.Uint64(), rng.Uint64()))
		var legal *pb.GetLegalActionsReply
		if i == 0 {
			legal = first
		}
		go func() { results <- m.act(ctx, s, actorRng, legal) }()
	}
	over := true
	for range seats {
		if !<-results {
			over = false
			cancel()
		}
	}
	return over
}

// act is one seat's person: waits for its turn, thinks, plays. True once the match is over.
func (m *match) act(ctx context.Context, s *stream, rng *rand.Rand, legal *pb.GetLegalActionsReply) bool {
	f := m.f
	for {
		if !f.acting.Wait(ctx) {
			return false
		}
		version, turn, finished := m.state(s)
		if finished {
			return true
		}
		if !turn {
			if !s.waitNewer(ctx, version, time.Hour) {
				return m.over(s)
			}
			continue
		}
		if !sleep(ctx, f.think(rng)) {
			return false
		}
		if !f.acting.On() {
			continue
		}
		version, turn, finished = m.state(s)
		if finished {
			return true
		}
		if !turn {
			continue
		}
		if legal == nil || legal.GetVersion() < version {
			var ok bool
			if legal, ok = m.legal(ctx, s); !ok {
				return false
			}
		}
		if legal.GetNext().GetFinished() {
			return true
		}
		if !slices.Contains(legal.GetNext().GetPlayers(), s.seat) || len(legal.GetActions()) == 0 {
			// the board is resolving a roll or a draw: its next view says who is next
			legal = nil
			if !s.waitNewer(ctx, version, f.cfg.RPCTimeout) {
				return m.over(s)
			}
			continue
		}
		action, err := pick(rng, legal)
		if err != nil {
			f.stats.Error("pick: " + err.Error())
			return false
		}
		reply, ok := m.submit(ctx, s, legal.GetVersion(), action)
		if !ok {
			return false
		}
		if reply == nil { // refused: ask afresh next time
			legal = nil
			continue
		}
		legal = reply.GetLegalActions()
		if reply.GetFinished() {
			return true
		}
	}
}

// over: the stream ended or went quiet; true when the match is over.
func (m *match) over(s *stream) bool {
	_, _, finished := m.state(s)
	return finished
}

func (m *match) legal(ctx context.Context, s *stream) (*pb.GetLegalActionsReply, bool) {
	callCtx, cancel := context.WithTimeout(withToken(ctx, s.token), m.f.cfg.RPCTimeout)
	defer cancel()
	began := time.Now()
	reply, err := s.who.gw.GetLegalActions(callCtx, &pb.GetLegalActionsRequest{
		MatchId: m.id, Player: s.seat,
	})
	if err != nil {
		if ctx.Err() == nil {
			m.f.countFailure("legal actions", err)
		}
		return nil, false
	}
	m.f.stats.Legal(began, time.Now())
	return reply, true
}

// submit plays action on the seat's stream: its acknowledgement (nil: refused by the
// rules, counted), then waits until the stream shows its view. False: the match is left.
// A RESOURCE_EXHAUSTED answer is counted and retried after its retry-after, as a polite
// client does; the latency counts from the first attempt.
func (m *match) submit(
	ctx context.Context, s *stream, legalVersion uint64, action *pb.GameAction,
) (*pb.SubmitActionReply, bool) {
	f := m.f
	command := &pb.SubmitActionRequest{
		MatchId: m.id, Player: s.seat, Action: action, CommandId: commandID(),
		ReturnLegalActions: true,
	}
	sent := time.Now()
	timer := time.NewTimer(f.cfg.RPCTimeout)
	defer timer.Stop()
	for {
		for len(s.answer) > 0 { // an answer nobody waited for any more
			<-s.answer
		}
		s.sent++
		id := s.sent
		err := s.play.Send(&pb.PlayRequest{Id: id, Kind: &pb.PlayRequest_Action{Action: command}})
		if err != nil {
			if ctx.Err() == nil {
				f.stats.Error("action: stream closed")
			}
			return nil, false
		}
		var update *pb.PlayUpdate
		for update == nil {
			select {
			case u := <-s.answer:
				if u.GetId() == id {
					update = u
				}
			case <-s.dead:
				if ctx.Err() == nil && !m.over(s) {
					f.stats.Error("action: stream closed")
				}
				return nil, false
			case <-ctx.Done():
				return nil, false
			case <-timer.C:
				f.stats.Error("action: no answer")
				return nil, false
			}
		}
		if refused := update.GetRefused(); refused != nil {
			if turnedAway(refused) {
				f.stats.Refused("action")
				wait := time.Duration(max(refused.GetRetryAfterMs(), 1)) * time.Millisecond
				if !sleep(ctx, wait) {
					return nil, false
				}
				continue
			}
			version, _, _ := m.state(s)
			if version > legalVersion {
				f.stats.Raced()
			} else {
				f.stats.Error("action refused: " + refused.GetCode() + " " + refused.GetReason())
			}
			return nil, true
		}
		ack := update.GetAck()
		f.stats.Acked(m.game, sent, time.Now())
		m.acked(s, ack.GetVersion(), sent)
		seen, ok := s.waitVersion(ctx, ack.GetVersion(), f.cfg.RPCTimeout)
		if !ok {
			if ctx.Err() == nil {
				f.stats.OwnViewLost()
				f.stats.Error("view: not shown")
			}
			return nil, false
		}
		f.stats.OwnView(sent, seen)
		return ack, true
	}
}

// turnedAway: the stack refused the action for its load (admission, a quota), not the
// rules for its content. PlayRefused.code is the status code's name as gRPC spells it
// (RESOURCE_EXHAUSTED), not Go's codes.ResourceExhausted.String() ("ResourceExhausted").
func turnedAway(refused *pb.PlayRefused) bool {
	return refused.GetCode() == "RESOURCE_EXHAUSTED"
}

// commandID is random, not drawn from the seeded generator: a command id must be new to
// the stack, also for a second run with the same seed against the same stack.
func commandID() string {
	var buf [16]byte
	_, _ = cryptorand.Read(buf[:])
	return hex.EncodeToString(buf[:])
}

// close ends every stream and gives the people's connections back.
func (m *match) close() {
	if m.cancel != nil {
		m.cancel()
	}
	for _, s := range m.streams {
		if s.opened {
			<-s.dead
		}
		m.f.pool.Put(s.who)
	}
}
