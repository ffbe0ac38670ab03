package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/signal"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"

	"github.com/voiceapi/voiceapi/client"
	"github.com/voiceapi/voiceapi/data"
)

// showOptions are the flags of `voiceapi campaign show`.
type showOptions struct {
	remoteFlags
	watch    bool
	interval time.Duration
	asJSON   bool
}

func newCampaignShowCommand() *cobra.Command {
	var o showOptions
	cmd := &cobra.Command{
		Use:   "show ID",
		Short: "Show a campaign and its recipients' counts by state; --watch follows it to its end",
		Long: "Shows the campaign's settings and its recipients by state (completed ones by outcome). --watch reads it again " +
			"every --interval until it is completed or canceled: a bar of finished recipients on standard error when that is " +
			"a terminal, otherwise a line each time the counts change. Ctrl-C stops watching (exit status 130); the campaign goes on.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := o.client()
			if err != nil {
				return err
			}
			if o.watch && o.interval <= 0 {
				return errors.New("--interval must be more than 0")
			}
			camp, _, err := c.Campaigns.Get(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			var stopped error
			if o.watch {
				if camp, err = watchCampaign(cmd, c, camp, o.interval); errors.Is(err, ErrInterrupted) {
					stopped, cmd.SilenceErrors = err, true // the campaign as last read, then exit 130
				} else if err != nil {
					return err
				}
			}
			if o.asJSON {
				if err := json.NewEncoder(cmd.OutOrStdout()).Encode(camp); err != nil {
					return err
				}
				return stopped
			}
			printCampaign(cmd.OutOrStdout(), camp)
			return stopped
		},
	}
	f := cmd.Flags()
	o.remoteFlags.register(f)
	f.BoolVarP(&o.watch, "watch", "w", false, "read the campaign again until it is completed or canceled")
	f.DurationVar(&o.interval, "interval", 2*time.Second, "wait between two reads with --watch")
	f.BoolVar(&o.asJSON, "json", false, "print the campaign as JSON")
	return cmd
}

// watchCampaign reads the campaign every interval until it is final and returns it as
// last read. An interrupt (Ctrl-C) or the end of ctx stops the watching only: it returns
// the campaign as last read, which goes on as it was, with ErrInterrupted (exit 130: a
// script waiting for the campaign's end must not go on as though it had come).
func watchCampaign(cmd *cobra.Command, c *client.Client, camp *data.Campaign, interval time.Duration) (*data.Campaign, error) {
	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt)
	defer stop()
	bar := newCampaignBar(cmd.ErrOrStderr(), camp)
	defer bar.done()
	out, shown, away := cmd.OutOrStdout(), "", false
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		if line := camp.Status + ": " + countsLine(camp.Counts); bar.bar == nil && line != shown {
			fmt.Fprintln(out, line)
			shown = line
		}
		bar.set(camp)
		if data.CampaignFinal(camp.Status) {
			return camp, nil
		}
		select {
		case <-ctx.Done():
			bar.done()
			fmt.Fprintf(cmd.ErrOrStderr(), "Stopped watching; campaign %s goes on.\n", camp.ID)
			return camp, ErrInterrupted
		case <-tick.C:
		}
		next, _, err := c.Campaigns.Get(ctx, camp.ID)
		if err != nil {
			if ctx.Err() != nil {
				continue // the interrupt came during the read: the select above says so
			}
			if serverAway(err) {
				// A restart: the campaign goes on without the server's answers, so watch on.
				if !away {
					fmt.Fprintf(cmd.ErrOrStderr(), "The server does not answer (%v); still watching.\n", err)
					away = true
				}
				continue
			}
			return nil, err
		}
		camp, away = next, false
	}
}

// campaignBar draws a campaign's finished recipients out of its total on a terminal;
// its zero value draws nothing.
type campaignBar struct{ bar *progressbar.ProgressBar }

func newCampaignBar(w io.Writer, camp *data.Campaign) *campaignBar {
	if !isTerminal(w) {
		return &campaignBar{}
	}
	return &campaignBar{bar: progressbar.NewOptions64(camp.Counts.Total,
		progressbar.OptionSetWriter(w),
		progressbar.OptionSetDescription(barText(camp)),
		progressbar.OptionShowCount(),
		progressbar.OptionSetWidth(24),
		// No throttle: the bar moves once a read (--interval), and its last state is drawn.
		progressbar.OptionSetElapsedTime(true),
		progressbar.OptionClearOnFinish(),
		progressbar.OptionSetRenderBlankState(true),
	)}
}

// set moves the bar to the campaign's finished recipients, its status beside it.
func (b *campaignBar) set(camp *data.Campaign) {
	if b.bar != nil {
		b.bar.Describe(barText(camp))
		b.bar.Set64(finished(camp.Counts))
	}
}

func barText(camp *data.Campaign) string {
	return fmt.Sprintf("campaign %s (%s)", oneLine(camp.Name, 30), camp.Status)
}

// done clears the bar; later calls do nothing.
func (b *campaignBar) done() {
	if b.bar != nil {
		b.bar.Finish()
		b.bar = nil
	}
}

// printCampaign writes a campaign's settings and its recipients by state.
func printCampaign(w io.Writer, camp *data.Campaign) {
	fmt.Fprintf(w, "Campaign %s %q: %s\n", camp.ID, camp.Name, camp.Status)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "  agent\t%s\n", camp.AgentID)
	fmt.Fprintf(tw, "  from\t%s (%s)\n", camp.FromNumber, camp.NumberID)
	fmt.Fprintf(tw, "  window\t%s %s-%s, time zone %s (a recipient's own where given)\n",
		strings.Join(camp.Window.Days, ","), camp.Window.Start, camp.Window.End, camp.Timezone)
	fmt.Fprintf(tw, "  at once\t%d\n", camp.MaxConcurrent)
	r := camp.Retry
	fmt.Fprintf(tw, "  retry\t%s: up to %s, %s apart\n", strings.Join(r.On, ","), plural(r.MaxAttempts, "attempt"), plural(r.BackoffMinutes, "minute"))
	fmt.Fprintf(tw, "  start at\t%s\n", camp.StartAt.Format(time.RFC3339))
	if camp.StartedAt != nil {
		fmt.Fprintf(tw, "  started\t%s\n", camp.StartedAt.Format(time.RFC3339))
	}
	if camp.FinishedAt != nil {
		fmt.Fprintf(tw, "  finished\t%s\n", camp.FinishedAt.Format(time.RFC3339))
	}
	im := camp.Import
	fmt.Fprintf(tw, "  imported\t%s, %s merged, %d on the suppression list\n", plural(im.Rows, "row"), plural(im.Duplicates, "duplicate"), im.Suppressed)
	tw.Flush()
	fmt.Fprintln(w, "Recipients:")
	n := camp.Counts
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "  pending\t%d\n  in_progress\t%d\n", n.Pending, n.InProgress)
	var done int64
	for _, o := range slices.Sorted(maps.Keys(n.Completed)) {
		done += n.Completed[o]
	}
	fmt.Fprintf(tw, "  completed\t%d\n", done)
	for _, o := range slices.Sorted(maps.Keys(n.Completed)) {
		fmt.Fprintf(tw, "    %s\t%d\n", o, n.Completed[o])
	}
	// The API's suppressed counts the numbers skipped at import, which are no recipients
	// and so not in the total: said, so the lines add up.
	skipped := ""
	if im.Suppressed > 0 {
		skipped = fmt.Sprintf(" (%d skipped at import, not in the total)", im.Suppressed)
	}
	fmt.Fprintf(tw, "  suppressed\t%d%s\n  exhausted\t%d\n  canceled\t%d\n  total\t%d\n", n.Suppressed, skipped, n.Exhausted, n.Canceled, n.Total)
	tw.Flush()
}
