module github.com/mcugen/mcugen

go 1.26

require (
	github.com/alecthomas/kong v1.17.0
	github.com/bazelbuild/buildtools v0.0.0-20260904073137-eaa4d125b423
	github.com/google/flatbuffers v25.12.19+incompatible
	github.com/sergi/go-diff v1.4.0
	gonum.org/v1/gonum v0.17.0
	google.golang.org/protobuf v1.36.12
)
