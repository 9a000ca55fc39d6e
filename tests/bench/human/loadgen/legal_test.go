package main

import (
	"math/rand/v2"
	"testing"

	pb "humanload/tabletopv1"
)

func flickTemplate() *pb.GetLegalActionsReply {
	flick := &pb.GameAction{Game: &pb.GameAction_DungeonDrop{DungeonDrop: &pb.DungeonDropAction{
		Action: &pb.DungeonDropAction_Flick{Flick: &pb.DungeonDropFlick{Cube: "bullion01"}},
	}}}
	return &pb.GetLegalActionsReply{Actions: []*pb.LegalAction{{
		Action: flick,
		Label:  "flick bullion01",
		Params: []*pb.ParamRange{
			{Name: "direction", Low: 0, High: 360},
			{Name: "strength", Low: 0.25, High: 0.5},
		},
	}}}
}

func TestParametersAreDrawnInsideTheirRanges(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	legal := flickTemplate()
	for range 200 {
		action, err := pick(rng, legal)
		if err != nil {
			t.Fatal(err)
		}
		flick := action.GetDungeonDrop().GetFlick()
		if flick.GetCube() != "bullion01" {
			t.Fatalf("the fixed field changed: %v", flick)
		}
		if d := flick.GetDirection(); d < 0 || d > 360 {
			t.Fatalf("direction %v outside [0, 360]", d)
		}
		if s := flick.GetStrength(); s < 0.25 || s > 0.5 {
			t.Fatalf("strength %v outside [0.25, 0.5]", s)
		}
	}
	// the legal action handed out is an example: it is never changed
	if legal.GetActions()[0].GetAction().GetDungeonDrop().GetFlick().GetStrength() != 0 {
		t.Fatal("pick changed the example it was given")
	}
}

func TestAnIntegerParameterIsRoundedInANestedMessage(t *testing.T) {
	jetpack := &pb.GameAction{Game: &pb.GameAction_Crashland{Crashland: &pb.CrashlandAction{
		Action: &pb.CrashlandAction_SpendJetpack{SpendJetpack: &pb.CrashlandSpendJetpack{
			Destination: &pb.CrashlandPosition{},
		}},
	}}}
	legal := &pb.GetLegalActionsReply{Actions: []*pb.LegalAction{{
		Action: jetpack,
		Params: []*pb.ParamRange{{Name: "row", Low: 2.6, High: 2.9}},
	}}}
	action, err := pick(rand.New(rand.NewPCG(3, 4)), legal)
	if err != nil {
		t.Fatal(err)
	}
	if row := action.GetCrashland().GetSpendJetpack().GetDestination().GetRow(); row != 3 {
		t.Fatalf("row %d, want 3 (2.6-2.9 rounded)", row)
	}
}

func TestAParameterNoFieldHasIsAnError(t *testing.T) {
	legal := flickTemplate()
	legal.GetActions()[0].Params = []*pb.ParamRange{{Name: "spin", Low: 0, High: 1}}
	if _, err := pick(rand.New(rand.NewPCG(5, 6)), legal); err == nil {
		t.Fatal("a parameter without a field was accepted")
	}
}

func TestOnlyALoadRefusalIsTurnedAway(t *testing.T) {
	if !turnedAway(&pb.PlayRefused{Code: "RESOURCE_EXHAUSTED"}) {
		t.Fatal("RESOURCE_EXHAUSTED is the stack turning an action away")
	}
	for _, code := range []string{"FAILED_PRECONDITION", "ResourceExhausted", ""} {
		if turnedAway(&pb.PlayRefused{Code: code}) {
			t.Fatalf("%q counted as turned away", code)
		}
	}
}
