package cli

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/voiceapi/voiceapi/client"
)

// NewCallsCommand is `voiceapi calls`: the call history through the API of a running server.
func NewCallsCommand() *cobra.Command {
	cmd := &cobra.Command{Use: "calls", Short: "Call history through the API of a running server"}
	cmd.AddCommand(newCallsExportCommand(), newCallsAnalyzeCommand(), newCallsBackfillCommand())
	return cmd
}

// exportChunk is how many calls one export request asks for: a connection cut costs at
// most one chunk, which the command says how to resume.
var exportChunk = 10_000

func newCallsExportCommand() *cobra.Command {
	var flags remoteFlags
	var x client.CallExport
	var from, to, out string
	var force bool
	cmd := &cobra.Command{
		Use:   "export",
		Short: "Stream every call the filters select as NDJSON or CSV",
		Long: "Streams GET /api/v1/calls/export into --out (standard output by default), " + fmt.Sprint(exportChunk) +
			" calls per request, each request resuming from the cursor the previous one ended with. A progress bar on " +
			"standard error counts the calls when it is a terminal. If the connection fails, the calls of the chunks " +
			"completed are in the output and the error names the --cursor that continues after them. See docs/calls.md.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := flags.client()
			if err != nil {
				return err
			}
			if x.Filter.From, err = optTime("from", from); err != nil {
				return err
			}
			if x.Filter.To, err = optTime("to", to); err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			if out != "" && out != "-" {
				if err := refuseOverwrite(out, force); err != nil {
					return err
				}
				f, err := os.Create(out)
				if err != nil {
					return err
				}
				defer f.Close()
				w = f
			}
			bar := newCountProgress(cmd.ErrOrStderr(), "exporting calls")
			defer bar.Done()
			total, err := exportChunks(cmd, c, x, w, bar)
			bar.Done()
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "exported %s\n", plural(total, "call"))
			return nil
		},
	}
	f := cmd.Flags()
	flags.register(f)
	f.StringVar(&x.Format, "format", "ndjson", "ndjson or csv")
	f.StringVar(&x.Q, "q", "", "only calls holding every word of this search")
	f.StringVar(&x.Filter.AgentID, "agent-id", "", "only calls of this agent")
	f.StringVar(&x.Filter.NumberID, "number-id", "", "only calls of this number")
	f.StringVar(&x.Filter.Direction, "direction", "", "only calls of this direction")
	f.StringVar(&x.Filter.Status, "status", "", "only calls in this status")
	f.StringVar(&from, "from", "", "only calls created at or after this RFC 3339 time")
	f.StringVar(&to, "to", "", "only calls created before this RFC 3339 time")
	f.StringVar(&x.Cursor, "cursor", "", "resume after the calls an earlier export ended with")
	f.StringVarP(&out, "out", "o", "", "file to write (standard output when empty or -)")
	f.BoolVar(&force, "force", false, "replace --out if it exists")
	consentFlag(f, "force")
	return cmd
}

// exportChunks requests chunk after chunk until the export is complete. A CSV header row
// is written once: the later chunks' are dropped.
func exportChunks(cmd *cobra.Command, c *client.Client, x client.CallExport, w io.Writer, bar *countProgress) (int, error) {
	total := 0
	for first := true; ; first = false {
		x.Limit = exportChunk
		dst := io.Writer(&lineCounter{w: w, bar: bar})
		if x.Format == "csv" && !first {
			dst = &skipFirstLine{w: dst}
		}
		res, err := c.Calls.Export(cmd.Context(), x, dst)
		if err != nil {
			if first && x.Cursor == "" {
				return total, err
			}
			return total, fmt.Errorf("%w; %d calls were written before this chunk: continue with --cursor %s", err, total, x.Cursor)
		}
		total += res.Count
		if res.Cursor == "" {
			return total, nil
		}
		x.Cursor = res.Cursor
	}
}

func optTime(name, s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return t, fmt.Errorf("--%s must be an RFC 3339 time such as 2026-11-01T00:00:00Z", name)
	}
	return t, nil
}

// lineCounter passes bytes on and counts the lines (calls; CSV rows with a line break
// inside a quoted transcript count once per line, so the bar is approximate for CSV).
type lineCounter struct {
	w   io.Writer
	bar *countProgress
}

func (l *lineCounter) Write(p []byte) (int, error) {
	n, err := l.w.Write(p)
	for _, b := range p[:n] {
		if b == '\n' {
			l.bar.Add(1)
		}
	}
	return n, err
}

// skipFirstLine drops everything up to and including the first line break.
type skipFirstLine struct {
	w    io.Writer
	done bool
}

func (s *skipFirstLine) Write(p []byte) (int, error) {
	if s.done {
		return s.w.Write(p)
	}
	for i, b := range p {
		if b == '\n' {
			s.done = true
			_, err := s.w.Write(p[i+1:])
			return len(p), err
		}
	}
	return len(p), nil
}
