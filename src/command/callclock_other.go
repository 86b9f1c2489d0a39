//go:build !amd64

package command

func rdtsc() int64 { return nanotime() }

func tscTrusted() bool { return false }
