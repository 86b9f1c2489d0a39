// Command report turns the runs of benchmarks/run.sh into a Markdown report and a PNG chart: medians
// per command and server, HotKV/Redis ratios, server CPU-seconds per million requests, latency
// percentiles and RSS, and the memory table (bytes per member) of the memory section. See
// benchmarks/README.md.
//
//	report -manifest runs.tsv -meta meta.txt -memory memory.tsv -md results/2026-01-01-box.md -png results/2026-01-01-box.png
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

func main() {
	manifest := flag.String("manifest", "", "run.sh's manifest (one tab-separated line per run)")
	metaPath := flag.String("meta", "", "run.sh's key=value metadata")
	md := flag.String("md", "", "Markdown output (default stdout)")
	png := flag.String("png", "", "PNG chart of the throughput section (none if empty); other sections' charts get -<section> before .png")
	memory := flag.String("memory", "", "run.sh's memory table (none if empty)")
	flag.Parse()
	if err := build(*manifest, *metaPath, *memory, *md, *png); err != nil {
		fmt.Fprintln(os.Stderr, "report:", err)
		os.Exit(1)
	}
}

func build(manifest, metaPath, memory, md, png string) error {
	runs, err := readManifest(manifest)
	if err != nil {
		return err
	}
	meta, err := readMeta(metaPath)
	if err != nil {
		return err
	}
	mem, err := readMemory(memory)
	if err != nil {
		return err
	}
	charts, err := writeCharts(png, runs)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	writeMarkdown(&buf, runs, mem, meta, charts)
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

// writeCharts draws every section that has a chart: the throughput section into png, another
// section into png's name with -<section> before the extension. It returns the file names drawn.
func writeCharts(png string, runs []run) (map[string]string, error) {
	charts := map[string]string{}
	if png == "" {
		return charts, nil
	}
	for _, sec := range sections {
		if sec.chart == "" {
			continue
		}
		path := png
		if sec.name != "throughput" {
			ext := filepath.Ext(png)
			path = strings.TrimSuffix(png, ext) + "-" + sec.name + ext
		}
		drawn, err := writeChart(path, runs, sec)
		if err != nil {
			return nil, err
		}
		if drawn {
			charts[sec.name] = filepath.Base(path)
		}
	}
	return charts, nil
}
