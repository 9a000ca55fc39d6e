package main

import (
	"testing"
	"time"

	pb "humanload/tabletopv1"
)

func TestAnArrivalIsTheFirstViewWithTheVersion(t *testing.T) {
	s := &stream{}
	base := time.Unix(1000, 0)
	for i, version := range []uint64{3, 5, 9} { // views coalesce: versions skip
		s.version = version
		s.arrivals[s.arrived%arrivalsKept] = arrival{version, base.Add(time.Duration(i) * time.Second)}
		s.arrived++
	}
	if at, ok := s.arrivalOf(4); !ok || !at.Equal(base.Add(time.Second)) {
		t.Fatalf("version 4 arrived with 5, at +1 s: got %v %v", at, ok)
	}
	if _, ok := s.arrivalOf(10); ok {
		t.Fatal("version 10 has not arrived")
	}
}

func TestAnArrivalNoLongerRememberedIsNotGuessed(t *testing.T) {
	s := &stream{}
	base := time.Unix(1000, 0)
	for i := range arrivalsKept + 2 {
		s.version = uint64(10 + i)
		s.arrivals[s.arrived%arrivalsKept] = arrival{s.version, base.Add(time.Duration(i) * time.Second)}
		s.arrived++
	}
	if _, ok := s.arrivalOf(5); ok {
		t.Fatal("version 5 came before the oldest arrival remembered: its time is unknown")
	}
	if at, ok := s.arrivalOf(15); !ok || !at.Equal(base.Add(5*time.Second)) {
		t.Fatalf("version 15 arrived at +5 s: got %v %v", at, ok)
	}
}

func TestOtherStreamsCountAnActionOnceEach(t *testing.T) {
	f := &Fleet{stats: NewStats()}
	m := &match{f: f}
	actor := m.add("p1", nil, "")
	other := m.add("p2", nil, "")
	spectator := m.add("", nil, "")
	f.stats.Mark()
	sent := time.Now()
	// the spectator shows version 7 before the actor's ack comes
	m.mu.Lock()
	spectator.version = 7
	spectator.arrivals[0] = arrival{7, sent.Add(20 * time.Millisecond)}
	spectator.arrived = 1
	m.mu.Unlock()
	m.acked(actor, 7, sent)
	// the other seat shows it later, then a newer version
	m.onView(other, viewOf(7))
	m.onView(other, viewOf(8))
	window := f.stats.Collect()
	if len(window.OthersMs) != 2 {
		t.Fatalf("two other streams, two samples: got %v", window.OthersMs)
	}
	if window.OthersMs[0] != 20 {
		t.Fatalf("the spectator's arrival counts from the send: got %v ms", window.OthersMs[0])
	}
	if len(m.pending) != 0 {
		t.Fatalf("an action every stream showed is dropped: %d pending", len(m.pending))
	}
}

func viewOf(version uint64) *pb.MatchView {
	return &pb.MatchView{Version: version}
}
