package cli

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/voiceapi/voiceapi/client"
	"github.com/voiceapi/voiceapi/data"
)

// createOptions are the flags of `voiceapi campaign create`.
type createOptions struct {
	remoteFlags
	file, recipients, key                     string
	agent, fromNumber, name, timezone, window string
	startAt, retry                            string
	maxConcurrent                             int
	asJSON                                    bool
}

// settingFlags are the flags a --file replaces.
var settingFlags = []string{"agent", "from-number", "name", "timezone", "window", "start-at", "retry", "max-concurrent"}

func newCampaignCreateCommand() *cobra.Command {
	var o createOptions
	cmd := &cobra.Command{
		Use:   "create --agent ID --from-number E164 --window 'DAYS HH:MM-HH:MM' --max-concurrent N --recipients FILE",
		Short: "Create a campaign from a CSV or JSON list of recipients",
		Long: "Creates a campaign of --agent (its id or name) calling from --from-number (a number of the workspace, in E.164 " +
			"or as its id) the recipients of --recipients: a .csv (phone_number column, optional timezone, every other column " +
			"a variable) or a .json list of {phone_number, timezone, variables}. --file gives the settings as the API's JSON " +
			"body instead of the flags. --window is the days (mon,tue or mon-fri) and hours, such as 'mon-fri 09:00-17:00'; " +
			"--retry is OUTCOMES:MAX_ATTEMPTS:BACKOFF_MINUTES, such as no_answer,busy:3:60. The request carries an " +
			"Idempotency-Key (a new one each run, or --idempotency-key), so it is retried safely: a run repeated with the same " +
			"key makes the campaign once. A refused file is reported field by field, naming its lines. See docs/campaigns.md.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runCampaignCreate(cmd, o)
		},
	}
	f := cmd.Flags()
	o.remoteFlags.register(f)
	f.StringVarP(&o.file, "file", "f", "", "the campaign's settings as the API's JSON body (recipients in it, or from --recipients)")
	f.StringVar(&o.recipients, "recipients", "", "the recipients: a .csv or a .json file")
	f.StringVar(&o.agent, "agent", "", "the agent that calls (its id or its name); it must have a published version")
	f.StringVar(&o.fromNumber, "from-number", "", "the workspace's number to call from, in E.164 (+14155550123) or as its id")
	f.StringVar(&o.name, "name", "", "the campaign's name (default: the recipients file's name)")
	f.StringVar(&o.timezone, "timezone", "", "the time zone of recipients that give none, such as America/New_York (default UTC)")
	f.StringVar(&o.window, "window", "", "when to call, in each recipient's time zone: DAYS HH:MM-HH:MM, such as 'mon-fri 09:00-17:00'")
	f.IntVar(&o.maxConcurrent, "max-concurrent", 0, "how many of the campaign's calls may run at once")
	f.StringVar(&o.retry, "retry", "", "OUTCOMES:MAX_ATTEMPTS:BACKOFF_MINUTES, such as no_answer,busy:3:60 (default no_answer,busy:3:60)")
	f.StringVar(&o.startAt, "start-at", "", "when to start, an RFC 3339 time (default now)")
	f.StringVar(&o.key, "idempotency-key", "", "the request's Idempotency-Key (default: a new random one)")
	f.BoolVar(&o.asJSON, "json", false, "print the created campaign as JSON (as campaign show --json) instead of a sentence")
	for _, s := range settingFlags {
		exclusiveFlags(cmd, "file", s)
	}
	return cmd
}

func runCampaignCreate(cmd *cobra.Command, o createOptions) error {
	c, err := o.client()
	if err != nil {
		return err
	}
	ctx := cmd.Context()
	in, err := o.settings(ctx, cmd, c)
	if err != nil {
		return err
	}
	var csv []byte
	if o.recipients != "" {
		if len(in.Recipients) > 0 {
			return errors.New("--file lists recipients already: leave out --recipients, or the file's list")
		}
		if in.Recipients, csv, err = readRecipients(o.recipients); err != nil {
			return err
		}
	} else if len(in.Recipients) == 0 {
		return errors.New("no recipients: give them with --recipients FILE.csv|FILE.json")
	}
	key := o.key
	if key == "" {
		key = rand.Text()
	}
	var camp *data.Campaign
	if csv != nil {
		camp, _, err = c.Campaigns.CreateFromCSV(ctx, in, csv, client.WithIdempotencyKey(key))
	} else {
		camp, _, err = c.Campaigns.Create(ctx, in, client.WithIdempotencyKey(key))
	}
	if err != nil {
		return refusal(err, key)
	}
	if o.asJSON {
		// A script takes the id (and the import's counts) from here, not from a sentence.
		return json.NewEncoder(cmd.OutOrStdout()).Encode(camp)
	}
	im := camp.Import
	fmt.Fprintf(cmd.OutOrStdout(), "Created campaign %s %q (%s): %s from %s, %s merged, %d on the suppression list skipped.\n",
		camp.ID, camp.Name, camp.Status, plural(camp.Counts.Total, "recipient"), plural(im.Rows, "row"), plural(im.Duplicates, "duplicate"), im.Suppressed)
	fmt.Fprintf(cmd.OutOrStdout(), "Follow it with: voiceapi campaign show %s --watch\n", camp.ID)
	return nil
}

// settings are the campaign's settings from --file, or from the flags (each required
// one checked here, so that a missing flag is named as a flag).
func (o createOptions) settings(ctx context.Context, cmd *cobra.Command, c *client.Client) (data.CampaignCreate, error) {
	var in data.CampaignCreate
	if o.file != "" {
		b, err := os.ReadFile(o.file)
		if err != nil {
			return in, err
		}
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.DisallowUnknownFields()
		dec.UseNumber() // a recipient's number variable keeps its text
		if err := dec.Decode(&in); err != nil {
			return in, fmt.Errorf("--file %s is not a campaign's JSON body: %w", o.file, err)
		}
		return in, nil
	}
	var missing []string
	for _, name := range []string{"agent", "from-number", "recipients", "window", "max-concurrent"} {
		if !cmd.Flags().Changed(name) {
			missing = append(missing, "--"+name)
		}
	}
	if len(missing) > 0 {
		return in, fmt.Errorf("missing %s (or give the settings as JSON with --file)", strings.Join(missing, ", "))
	}
	var err error
	in.Name = o.name
	if in.Name == "" {
		in.Name = strings.TrimSuffix(filepath.Base(o.recipients), filepath.Ext(o.recipients))
	}
	if in.Window, err = parseWindow(o.window); err != nil {
		return in, err
	}
	if o.retry != "" {
		if in.Retry, err = parseRetry(o.retry); err != nil {
			return in, err
		}
	}
	if o.startAt != "" {
		t, err := optTime("start-at", o.startAt)
		if err != nil {
			return in, err
		}
		in.StartAt = data.NewTime(t).Ptr()
	}
	if o.timezone != "" {
		in.Timezone = &o.timezone
	}
	in.MaxConcurrent = &o.maxConcurrent
	if in.AgentID, err = agentID(ctx, c, o.agent); err != nil {
		return in, err
	}
	in.NumberID, err = numberID(ctx, c, o.fromNumber)
	return in, err
}

// readRecipients reads a recipients file: a CSV is sent as it is (the server names its
// lines), a JSON list is decoded into the create's recipients.
func readRecipients(path string) ([]data.RecipientInput, []byte, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, err
	}
	switch strings.ToLower(filepath.Ext(path)) {
	case ".csv":
		return nil, b, nil
	case ".json":
		var rs []data.RecipientInput
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.DisallowUnknownFields()
		dec.UseNumber() // a recipient's number variable keeps its text
		if err := dec.Decode(&rs); err != nil {
			return nil, nil, fmt.Errorf("--recipients %s must be a JSON list of {phone_number, timezone, variables}: %w", path, err)
		}
		if len(rs) == 0 {
			return nil, nil, fmt.Errorf("--recipients %s lists no recipient", path)
		}
		return rs, nil, nil
	}
	return nil, nil, fmt.Errorf("--recipients %s must be a .csv or a .json file", path)
}

// parseWindow reads "DAYS HH:MM-HH:MM": days separated by commas, a range such as
// mon-fri for the days between. The server checks the days and hours themselves.
func parseWindow(s string) (*data.CampaignWindow, error) {
	fields := strings.Fields(s)
	if len(fields) != 2 {
		fields = []string{"", ""}
	}
	start, end, ok := strings.Cut(fields[1], "-")
	if fields[0] == "" || !ok {
		return nil, fmt.Errorf("--window %q: want DAYS HH:MM-HH:MM, such as 'mon-fri 09:00-17:00'", s)
	}
	w := &data.CampaignWindow{Start: start, End: end}
	for _, d := range strings.Split(fields[0], ",") {
		from, to, isRange := strings.Cut(d, "-")
		if !isRange {
			w.Days = append(w.Days, d)
			continue
		}
		i, j := slices.Index(data.Weekdays, from), slices.Index(data.Weekdays, to)
		if i < 0 || j < i {
			return nil, fmt.Errorf("--window %q: %s is not a range of days from mon to sun", s, d)
		}
		w.Days = append(w.Days, data.Weekdays[i:j+1]...)
	}
	return w, nil
}

// parseRetry reads "OUTCOMES:MAX_ATTEMPTS:BACKOFF_MINUTES"; the server checks the values.
func parseRetry(s string) (*data.CampaignRetry, error) {
	parts := strings.Split(s, ":")
	bad := fmt.Errorf("--retry %q: want OUTCOMES:MAX_ATTEMPTS:BACKOFF_MINUTES, such as no_answer,busy:3:60", s)
	if len(parts) != 3 {
		return nil, bad
	}
	attempts, err1 := strconv.Atoi(parts[1])
	backoff, err2 := strconv.Atoi(parts[2])
	if err1 != nil || err2 != nil {
		return nil, bad
	}
	r := &data.CampaignRetry{On: []string{}, MaxAttempts: attempts, BackoffMinutes: backoff}
	if parts[0] != "" {
		r.On = strings.Split(parts[0], ",")
	}
	return r, nil
}

// numberID is ref as a number id: an id as it is, an E.164 number resolved among the
// workspace's numbers.
func numberID(ctx context.Context, c *client.Client, ref string) (string, error) {
	if strings.HasPrefix(ref, data.PrefixNumber) {
		return ref, nil
	}
	for n, err := range c.Numbers.All(ctx, data.NumberFilter{}) {
		if err != nil {
			return "", err
		}
		if n.PhoneNumber == ref {
			return n.ID, nil
		}
	}
	return "", fmt.Errorf("--from-number %s is not a number of the workspace (give it in E.164, such as +14155550123, or as its id)", ref)
}

// refusal words a failed create: a validation failure one field a line (a CSV's line
// named in its path and message); a failure that leaves unknown whether the campaign was
// made (no answer, or a server error after the client's retries) with the key that makes
// a second run safe.
func refusal(err error, key string) error {
	var ce *client.Error
	if errors.As(err, &ce) && ce.StatusCode < 500 {
		if len(ce.Fields) == 0 {
			return err
		}
		var b strings.Builder
		fmt.Fprintf(&b, "the server refused it (%d %s), nothing was created:", ce.StatusCode, ce.Code)
		for _, p := range slices.Sorted(maps.Keys(ce.Fields)) {
			for _, m := range ce.Fields[p] {
				fmt.Fprintf(&b, "\n  %s: %s", p, m)
			}
		}
		return errors.New(b.String())
	}
	if key == "" {
		return err
	}
	return fmt.Errorf("%w\nWhether it was made is not known: run the command again with --idempotency-key %s to make it at most once", err, key)
}
