"""Between the pure engines and the platform's protobuf messages and envelopes."""
