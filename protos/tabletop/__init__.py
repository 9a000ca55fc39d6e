"""Generated protobuf code lives below (make protos)."""
