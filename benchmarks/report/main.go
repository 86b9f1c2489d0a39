// Command report turns the runs of benchmarks/run.sh into a Markdown report and a PNG chart: medians
// per command and server, HotKV/Redis ratios, server CPU-seconds per million requests, latency
// percentiles and RSS. See benchmarks/README.md.
//
//	report -manifest runs.tsv -meta meta.txt -md results/2026-01-01-box.md -png results/2026-01-01-box.png
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
)

func main() {
	manifest := flag.String("manifest", "", "run.sh's manifest (one tab-separated line per run)")
	metaPath := flag.String("meta", "", "run.sh's key=value metadata")
	md := flag.String("md", "", "Markdown output (default stdout)")
	png := flag.String("png", "", "PNG chart output (none if empty)")
	flag.Parse()
	if err := build(*manifest, *metaPath, *md, *png); err != nil {
		fmt.Fprintln(os.Stderr, "report:", err)
		os.Exit(1)
	}
}

func build(manifest, metaPath, md, png string) error {
	runs, err := readManifest(manifest)
	if err != nil {
		return err
	}
	meta, err := readMeta(metaPath)
	if err != nil {
		return err
	}
	chart := ""
	if png != "" {
		drawn, err := writeChart(png, runs)
		if err != nil {
			return err
		}
		if drawn {
			chart = filepath.Base(png)
		}
	}
	var buf bytes.Buffer
	writeMarkdown(&buf, runs, meta, chart)
	if md == "" {
		_, err = os.Stdout.Write(buf.Bytes())
		return err
	}
	if err := os.WriteFile(md, buf.Bytes(), 0o644); err != nil {
		return fmt.Errorf("cannot write the report: %w", err)
	}
	os.Stdout.Write(buf.Bytes())
	return nil
}
