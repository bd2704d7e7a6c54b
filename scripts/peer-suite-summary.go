// Counts the test cases of a peer's Go test suite run by
// scripts/kvrocks-suite or scripts/pika-suite (`go run` of this one file,
// standard library only; it is no part of the Rust build).
//
//	go run peer-suite-summary.go MANIFEST FAILURES [NOT_RUN]
//
// MANIFEST has one line per package run: `NAME<TAB>KIND<TAB>FILE<TAB>STATUS`.
// KIND `gotest` reads FILE as `go test -json` output and counts the leaf
// tests (a test with subtests counts its subtests; a parent also counts
// when it failed while none of its subtests did). KIND `ginkgo:SPECS` reads
// FILE as a Ginkgo JSON report and counts the specs written in the test
// file SPECS (the others, filtered out by focus-file, are reported as
// skipped by Ginkgo and not counted). STATUS is go test's exit status
// (124: killed by the time bound).
//
// Prints one line per package (`ok` or `FAILED` and its counts), the
// failing cases, and `N passed, N failed, N skipped`; writes every failing
// case's output to FAILURES. NOT_RUN lists cases the script told `go test`
// to skip, as `PACKAGE<TAB>TEST<TAB>REASON` lines: each counts as skipped
// and is printed with its reason. Exits 1 when a case or a package failed.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"strings"
)

type counts struct{ pass, fail, skip int }

type failure struct{ name, output string }

// event is one line of `go test -json`.
type event struct {
	Action  string
	Package string
	Test    string
	Output  string
}

func goTest(file string) (counts, []failure, error) {
	var c counts
	f, err := os.Open(file)
	if err != nil {
		return c, nil, err
	}
	defer f.Close()
	result := map[string]string{}
	output := map[string]*strings.Builder{}
	var order []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		var e event
		if json.Unmarshal(sc.Bytes(), &e) != nil || e.Test == "" {
			continue
		}
		if _, seen := output[e.Test]; !seen {
			output[e.Test] = &strings.Builder{}
			order = append(order, e.Test)
		}
		switch e.Action {
		case "output":
			output[e.Test].WriteString(e.Output)
		case "pass", "fail", "skip":
			result[e.Test] = e.Action
		}
	}
	if err := sc.Err(); err != nil {
		return c, nil, err
	}
	var failures []failure
	for _, name := range order {
		children, failedChild := false, false
		for _, other := range order {
			if strings.HasPrefix(other, name+"/") {
				children = true
				failedChild = failedChild || result[other] == "fail" || result[other] == ""
			}
		}
		r := result[name]
		if r == "" {
			// Started, never ended: the time bound or a crash ended the package.
			r = "fail"
		}
		if children && !(r == "fail" && !failedChild) {
			continue
		}
		switch r {
		case "pass":
			c.pass++
		case "skip":
			c.skip++
		default:
			c.fail++
			failures = append(failures, failure{name, output[name].String()})
		}
	}
	return c, failures, nil
}

// The parts of a Ginkgo JSON report read here.
type ginkgoReport struct {
	SpecReports []struct {
		ContainerHierarchyTexts []string
		LeafNodeText            string
		LeafNodeType            string
		LeafNodeLocation        struct{ FileName string }
		State                   string
		Failure                 struct {
			Message  string
			Location struct {
				FileName   string
				LineNumber int
			}
			ForwardedPanic string
		}
	}
}

func ginkgo(file, specs string) (counts, []failure, error) {
	var c counts
	data, err := os.ReadFile(file)
	if err != nil {
		return c, nil, err
	}
	var reports []ginkgoReport
	if err := json.Unmarshal(data, &reports); err != nil {
		return c, nil, err
	}
	var failures []failure
	for _, r := range reports {
		for _, s := range r.SpecReports {
			if s.LeafNodeType != "It" {
				// Suite-level nodes (BeforeSuite, ReportAfterSuite…).
				if s.State != "passed" && s.State != "skipped" {
					c.fail++
					failures = append(failures, failure{s.LeafNodeType, s.Failure.Message})
				}
				continue
			}
			file := s.LeafNodeLocation.FileName
			if i := strings.LastIndex(file, "/"); i >= 0 {
				file = file[i+1:]
			}
			if file != specs {
				continue
			}
			name := file + ": " + strings.Join(append(s.ContainerHierarchyTexts, s.LeafNodeText), " / ")
			switch s.State {
			case "passed":
				c.pass++
			case "skipped", "pending":
				c.skip++
			default:
				c.fail++
				msg := fmt.Sprintf("%s at %s:%d\n%s%s", s.State, s.Failure.Location.FileName,
					s.Failure.Location.LineNumber, s.Failure.Message, s.Failure.ForwardedPanic)
				failures = append(failures, failure{name, msg})
			}
		}
	}
	return c, failures, nil
}

func main() {
	if len(os.Args) != 3 && len(os.Args) != 4 {
		fmt.Fprintln(os.Stderr, "usage: go run peer-suite-summary.go MANIFEST FAILURES [NOT_RUN]")
		os.Exit(2)
	}
	manifest, err := os.ReadFile(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	out, err := os.Create(os.Args[2])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	defer out.Close()
	notRun := map[string][][]string{}
	if len(os.Args) == 4 {
		text, err := os.ReadFile(os.Args[3])
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		for _, line := range strings.Split(strings.TrimSpace(string(text)), "\n") {
			if f := strings.SplitN(line, "\t", 3); len(f) == 3 {
				notRun[f[0]] = append(notRun[f[0]], f[1:])
			}
		}
	}
	var total counts
	bad := false
	fmt.Printf("%-28s %-7s %6s %6s %7s\n", "package", "result", "passed", "failed", "skipped")
	for _, line := range strings.Split(strings.TrimSpace(string(manifest)), "\n") {
		fields := strings.Split(line, "\t")
		if len(fields) != 4 {
			continue
		}
		name, kind, file, status := fields[0], fields[1], fields[2], fields[3]
		var c counts
		var failures []failure
		var err error
		if specs, ok := strings.CutPrefix(kind, "ginkgo:"); ok {
			c, failures, err = ginkgo(file, specs)
		} else {
			c, failures, err = goTest(file)
		}
		c.skip += len(notRun[name])
		note := ""
		switch {
		case err != nil:
			note = "  (no results: the run ended before any case did; see its log)"
		case status == "124":
			note = "  (stopped at the time bound)"
		case status != "0" && c.fail == 0:
			note = "  (go test exit status " + status + ": build error or crash, see the log)"
		}
		result := "ok"
		if status != "0" || c.fail > 0 || err != nil {
			result = "FAILED"
			bad = true
		}
		fmt.Printf("%-28s %-7s %6d %6d %7d%s\n", name, result, c.pass, c.fail, c.skip, note)
		for _, skipped := range notRun[name] {
			fmt.Printf("    SKIP %s: %s\n", skipped[0], skipped[1])
		}
		for _, f := range failures {
			fmt.Printf("    FAIL %s\n", f.name)
			fmt.Fprintf(out, "=== %s: %s\n%s\n", name, f.name, f.output)
		}
		total.pass += c.pass
		total.fail += c.fail
		total.skip += c.skip
	}
	fmt.Printf("%d passed, %d failed, %d skipped\n", total.pass, total.fail, total.skip)
	if bad {
		os.Exit(1)
	}
}
