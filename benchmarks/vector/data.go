package main

import (
	"bufio"
	"compress/gzip"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"os"
)

// readIDX reads an idx3-ubyte(.gz) image file (Fashion-MNIST's format) as float32 rows, at most n.
func readIDX(path string, n int) ([][]float32, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var r io.Reader = bufio.NewReader(f)
	if gz, err := gzip.NewReader(r); err == nil {
		r = gz
	} else {
		return nil, fmt.Errorf("cannot read %s: %w", path, err)
	}
	var hdr [16]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return nil, err
	}
	if binary.BigEndian.Uint32(hdr[:]) != 0x803 {
		return nil, fmt.Errorf("%s: not an idx3-ubyte file", path)
	}
	count := int(binary.BigEndian.Uint32(hdr[4:]))
	dim := int(binary.BigEndian.Uint32(hdr[8:]) * binary.BigEndian.Uint32(hdr[12:]))
	if n <= 0 || n > count {
		n = count
	}
	out := make([][]float32, n)
	buf := make([]byte, dim)
	for i := range out {
		if _, err := io.ReadFull(r, buf); err != nil {
			return nil, err
		}
		v := make([]float32, dim)
		for j, b := range buf {
			v[j] = float32(b)
		}
		out[i] = v
	}
	return out, nil
}

func normalized(rows [][]float32) [][]float32 {
	out := make([][]float32, len(rows))
	for i, v := range rows {
		var s float64
		for _, x := range v {
			s += float64(x) * float64(x)
		}
		inv := float32(1 / math.Sqrt(s))
		w := make([]float32, len(v))
		for j, x := range v {
			w[j] = x * inv
		}
		out[i] = w
	}
	return out
}

func writeF32(path string, rows [][]float32) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	var b [4]byte
	for _, v := range rows {
		for _, x := range v {
			binary.LittleEndian.PutUint32(b[:], math.Float32bits(x))
			w.Write(b[:])
		}
	}
	if err := w.Flush(); err != nil {
		return err
	}
	return f.Close()
}

func writeI32(path string, rows [][]int32) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	var b [4]byte
	for _, v := range rows {
		for _, x := range v {
			binary.LittleEndian.PutUint32(b[:], uint32(x))
			w.Write(b[:])
		}
	}
	if err := w.Flush(); err != nil {
		return err
	}
	return f.Close()
}

func readI32(path string, k int) ([][]int32, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	n := len(b) / 4 / k
	out := make([][]int32, n)
	for i := range out {
		out[i] = make([]int32, k)
		for j := range out[i] {
			out[i][j] = int32(binary.LittleEndian.Uint32(b[4*(i*k+j):]))
		}
	}
	return out, nil
}

// deleted is the fixed 30% of base ids both engines delete: a multiplicative hash, so the choice is
// spread over the set and reproducible in the Python side (same formula).
func deleted(i int) bool { return (uint32(i)*2654435761)>>16%10 < 3 }
