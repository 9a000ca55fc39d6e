// The human-paced load generator (tests/bench/human): grpc-go, so the load's own CPU stays
// small beside the stack it measures. Its tabletopv1 package is generated from protos/ at
// bench time into the build folder (tests/bench/human/build.py), never committed.
module humanload

go 1.23

require (
	google.golang.org/grpc v1.72.1
	google.golang.org/protobuf v1.36.12
)

require (
	golang.org/x/net v0.35.0 // indirect
	golang.org/x/sys v0.30.0 // indirect
	golang.org/x/text v0.22.0 // indirect
	google.golang.org/genproto/googleapis/rpc v0.0.0-20250218202821-56aae31c358a // indirect
)
