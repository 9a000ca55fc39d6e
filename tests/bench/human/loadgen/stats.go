package main

import (
	"sync"
	"sync/atomic"
	"time"
)

// Stats are the samples of one measured window (from "mark" to "collect"). An action
// counts in the window when it was sent inside it; creations when they began inside it.
type Stats struct {
	mu    sync.Mutex
	start time.Time

	// action sent → its acknowledgement (durable) on the acting seat's stream
	ackMs []float64
	// action sent → the acting seat's stream delivers a view with the action's version
	viewMs []float64
	// action sent → every other stream of the match (other seats, spectators) has it
	othersMs []float64
	// CreateMatch sent → every seat and spectator of the match holds its first view
	setupMs []float64
	// GetLegalActions round trips (asked when a seat's cached legal actions are stale)
	legalMs []float64

	actions       int
	byGame        map[string]int
	matchesReady  int
	matchesEnded  int
	raced         int
	ownViewsLost  int
	othersLost    int
	refusals      map[string]int
	errors        map[string]int
	viewsReceived atomic.Int64
}

func NewStats() *Stats {
	return &Stats{
		start: time.Now(), refusals: map[string]int{}, errors: map[string]int{}, byGame: map[string]int{},
	}
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// Mark opens a new window: everything counted so far is dropped.
func (s *Stats) Mark() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.start = time.Now()
	s.ackMs, s.viewMs, s.othersMs, s.setupMs, s.legalMs = nil, nil, nil, nil, nil
	s.actions, s.matchesReady, s.matchesEnded, s.raced = 0, 0, 0, 0
	s.ownViewsLost, s.othersLost = 0, 0
	s.refusals, s.errors, s.byGame = map[string]int{}, map[string]int{}, map[string]int{}
	s.viewsReceived.Store(0)
}

func (s *Stats) inWindow(t time.Time) bool { return !t.Before(s.start) }

func (s *Stats) Acked(game string, sent, acked time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.inWindow(sent) {
		s.actions++
		s.byGame[game]++
		s.ackMs = append(s.ackMs, ms(acked.Sub(sent)))
	}
}

// sample adds one latency to samples when it began inside the window.
func (s *Stats) sample(samples *[]float64, began, ended time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.inWindow(began) {
		*samples = append(*samples, ms(ended.Sub(began)))
	}
}

func (s *Stats) OwnView(sent, seen time.Time)    { s.sample(&s.viewMs, sent, seen) }
func (s *Stats) OtherView(sent, seen time.Time)  { s.sample(&s.othersMs, sent, seen) }
func (s *Stats) Legal(began, answered time.Time) { s.sample(&s.legalMs, began, answered) }

func (s *Stats) Ready(began, ready time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.inWindow(began) {
		s.matchesReady++
		s.setupMs = append(s.setupMs, ms(ready.Sub(began)))
	}
}

func (s *Stats) count(into map[string]int, key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	into[key]++
}

// Refused counts a RESOURCE_EXHAUSTED answer: the stack turning load away.
func (s *Stats) Refused(what string) { s.count(s.refusals, what) }

// Error counts anything else that went wrong (a failed call, a lost stream, a timeout).
func (s *Stats) Error(what string) { s.count(s.errors, what) }

func (s *Stats) add(field *int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	*field++
}

// Raced counts an action refused because another seat's action changed the match between
// the legal actions and the click (a person clicking a button that just went stale).
func (s *Stats) Raced()        { s.add(&s.raced) }
func (s *Stats) MatchEnded()   { s.add(&s.matchesEnded) }
func (s *Stats) OwnViewLost()  { s.add(&s.ownViewsLost) }
func (s *Stats) OthersLost()   { s.add(&s.othersLost) }
func (s *Stats) ViewReceived() { s.viewsReceived.Add(1) }

type Window struct {
	WindowS       float64        `json:"window_s"`
	Actions       int            `json:"actions"`
	ByGame        map[string]int `json:"actions_by_game"`
	AckMs         []float64      `json:"ack_ms"`
	ViewMs        []float64      `json:"view_ms"`
	OthersMs      []float64      `json:"others_ms"`
	SetupMs       []float64      `json:"setup_ms"`
	LegalMs       []float64      `json:"legal_ms"`
	MatchesReady  int            `json:"matches_ready"`
	MatchesEnded  int            `json:"matches_ended"`
	Raced         int            `json:"raced"`
	OwnViewsLost  int            `json:"own_views_lost"`
	OthersLost    int            `json:"others_lost"`
	Refusals      map[string]int `json:"refusals"`
	Errors        map[string]int `json:"errors"`
	ViewsReceived int64          `json:"views_received"`
}

// Collect copies the window so far (it stays open).
func (s *Stats) Collect() Window {
	s.mu.Lock()
	defer s.mu.Unlock()
	copyOf := func(m map[string]int) map[string]int {
		out := make(map[string]int, len(m))
		for k, v := range m {
			out[k] = v
		}
		return out
	}
	return Window{
		WindowS:       time.Since(s.start).Seconds(),
		Actions:       s.actions,
		ByGame:        copyOf(s.byGame),
		AckMs:         append([]float64{}, s.ackMs...),
		ViewMs:        append([]float64{}, s.viewMs...),
		OthersMs:      append([]float64{}, s.othersMs...),
		SetupMs:       append([]float64{}, s.setupMs...),
		LegalMs:       append([]float64{}, s.legalMs...),
		MatchesReady:  s.matchesReady,
		MatchesEnded:  s.matchesEnded,
		Raced:         s.raced,
		OwnViewsLost:  s.ownViewsLost,
		OthersLost:    s.othersLost,
		Refusals:      copyOf(s.refusals),
		Errors:        copyOf(s.errors),
		ViewsReceived: s.viewsReceived.Load(),
	}
}
