# HotKV developer recipes. Plain commands work without just: see README.md.

# Run the server with embedded defaults (127.0.0.1:6379).
run *ARGS:
    go run ./src/cmd/hotkv {{ARGS}}

# Build the server binary into bin/.
build:
    go build -o bin/hotkv ./src/cmd/hotkv

# The full test suite (the README's test command; CI runs it).
test:
    go test -race -timeout 20m ./...

# Tests with the race detector on the concurrent packages only.
race:
    go test -race ./pipeline/... ./ds/... ./net/... ./src/... ./testfuzz/...

# Fuzz the RESP parser (default 2 minutes).
fuzz TIME="2m":
    go test -run '^$' -fuzz FuzzParse -fuzztime {{TIME}} ./net/resp/

# Benchmarks (allocation and ns/op for the hot paths).
bench:
    go test -run '^$' -bench . -benchmem ./...

# Side-by-side comparison with redis-server 7.0.15 using hotkv-benchmark (benchmarks/README.md):
# just compare, just compare --quick (a minute), just compare --big (5M keys), just compare --proof.
compare *ARGS:
    bash benchmarks/run.sh {{ARGS}}

# Format and vet.
lint:
    gofmt -l . | (! grep .)
    go vet ./...

# Re-record transcripts from a redis-server on PATH.
record:
    go test ./src/command -run TestTranscripts -update
