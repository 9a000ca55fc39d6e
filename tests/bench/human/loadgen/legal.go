package main

import (
	"fmt"
	"math"
	"math/rand/v2"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	pb "humanload/tabletopv1"
)

// pick chooses one of the legal actions uniformly, as the closed-loop bench's bots and the
// games' random bot do; a parametric entry (an ActionTemplate on the wire: an example
// action plus ParamRanges) gets every parameter drawn uniformly inside its range, an
// integer field rounded (docs/CONVENTIONS.md, "Parametric actions").
func pick(rng *rand.Rand, legal *pb.GetLegalActionsReply) (*pb.GameAction, error) {
	entry := legal.GetActions()[rng.IntN(len(legal.GetActions()))]
	action := proto.Clone(entry.GetAction()).(*pb.GameAction)
	for _, param := range entry.GetParams() {
		value := param.GetLow() + rng.Float64()*(param.GetHigh()-param.GetLow())
		if !setParam(action.ProtoReflect(), protoreflect.Name(param.GetName()), value) {
			return nil, fmt.Errorf("no numeric field %q in %s", param.GetName(), entry.GetLabel())
		}
	}
	return action, nil
}

// setParam sets the first numeric field called name, searching the set message fields
// depth first (GameAction → the game's action → the chosen action's message).
func setParam(message protoreflect.Message, name protoreflect.Name, value float64) bool {
	if field := message.Descriptor().Fields().ByName(name); field != nil {
		switch field.Kind() {
		case protoreflect.DoubleKind:
			message.Set(field, protoreflect.ValueOfFloat64(value))
		case protoreflect.FloatKind:
			message.Set(field, protoreflect.ValueOfFloat32(float32(value)))
		case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
			message.Set(field, protoreflect.ValueOfInt32(int32(math.Round(value))))
		case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
			message.Set(field, protoreflect.ValueOfInt64(int64(math.Round(value))))
		default:
			return false
		}
		return true
	}
	found := false
	message.Range(func(field protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		if field.Message() != nil && !field.IsList() && !field.IsMap() {
			found = setParam(v.Message(), name, value)
		}
		return !found
	})
	return found
}
