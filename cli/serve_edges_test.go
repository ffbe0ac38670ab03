package cli

import (
	"context"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/voiceapi/voiceapi/server"
)

// TestServeRefusesBadTrustedProxiesAndTimeouts: a bad --trusted-proxies range, a timeout
// of 0 or another value serve cannot honour (a login lifetime of 0 or less, a negative
// drain, body bound, pool size or retry wait, an unknown log level) stops serve before it
// opens anything, with a message naming the flag and what it wants. The edges that pass
// (--drain-timeout 0, a body bound of 0) start, which TestServeEdgeValuesStart holds.
func TestServeRefusesBadTrustedProxiesAndTimeouts(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--trusted-proxies", "10.0.0.0/33"}, `--trusted-proxies: "10.0.0.0/33" is not a CIDR range`},
		{[]string{"--trusted-proxies", "10.0.0.0/8,proxy.local"}, `--trusted-proxies: "proxy.local" is neither a CIDR range`},
		{[]string{"--read-header-timeout", "0s"}, "--read-header-timeout must be more than 0"},
		{[]string{"--write-timeout", "-1s"}, "--write-timeout must be more than 0"},
		{[]string{"--log-level", "verbose"}, `--log-level "verbose": want debug, info, warn or error`},
		{[]string{"--login-ttl", "0s"}, "--login-ttl must be more than 0"},
		{[]string{"--login-ttl", "-1h"}, "--login-ttl must be more than 0"},
		{[]string{"--drain-timeout", "-1ns"}, "--drain-timeout must be 0 or more"},
		{[]string{"--max-import-body", "-1"}, "--max-import-body must be 0 or more (0: its default size)"},
		{[]string{"--max-multipart-body", "-1"}, "--max-multipart-body must be 0 or more (0: its default size)"},
		{[]string{"--rate-limit", "-1"}, "--rate-limit must be 0 (off) or more"},
		{[]string{"--login-address-rate-limit", "-1"}, "--login-address-rate-limit must be 0 (off) or more"},
		{[]string{"--db-pool-size", "-1"}, "--db-pool-size must be 0 (pgx's default) or more"},
		{[]string{"--webhook-retry-schedule", "5s,-1ns"}, "--webhook-retry-schedule: -1ns is negative"},
	} {
		dir := t.TempDir()
		o := testServeOptions(t, dir, c.args...)
		// Already cancelled: a value that passes the checks makes serve start and stop at
		// once, returning nil, instead of serving until the test times out.
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		err := runServe(ctx, o, io.Discard, io.Discard)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: got %v, want an error containing %q", c.args, err, c.want)
		}
	}
}

// TestServeTrustedProxiesFromEnvironment: VOICEAPI_TRUSTED_PROXIES sets the flag.
func TestServeTrustedProxiesFromEnvironment(t *testing.T) {
	t.Setenv("VOICEAPI_TRUSTED_PROXIES", "10.0.0.0/8,fd00::/8")
	cmd := NewServeCommand()
	if err := bindEnv(cmd.Flags()); err != nil {
		t.Fatal(err)
	}
	got, err := cmd.Flags().GetStringSlice("trusted-proxies")
	if err != nil || strings.Join(got, " ") != "10.0.0.0/8 fd00::/8" {
		t.Fatalf("trusted-proxies from the environment: %v, %v", got, err)
	}
}

// TestServeEdgeValuesStart: the smallest values the docs allow pass the checks: a drain of
// 0, a body bound of 0 (its default), a login lifetime of 1ns, a retry wait of 0.
func TestServeEdgeValuesStart(t *testing.T) {
	for _, args := range [][]string{
		{"--drain-timeout", "0s"},
		{"--max-import-body", "0", "--max-json-body", "0"},
		{"--login-ttl", "1ns"},
		{"--db-pool-size", "0"},
		{"--webhook-retry-schedule", "0s,5s"},
		{"--login-address-rate-limit", "0"},
	} {
		o := testServeOptions(t, t.TempDir(), args...)
		if _, err := o.settings(); err != nil {
			t.Errorf("%v: %v", args, err)
		}
	}
}

// TestServeRefusalNamesTheVariable: a value serve refuses that came from VOICEAPI_* (a
// systemd Environment= line, docker -e) is named with its variable as well as its flag;
// from the command line, with the flag alone.
func TestServeRefusalNamesTheVariable(t *testing.T) {
	for _, c := range []struct{ env, value, want string }{
		{"VOICEAPI_LOGIN_TTL", "0s", "--login-ttl (from VOICEAPI_LOGIN_TTL): must be more than 0"},
		{"VOICEAPI_TRUSTED_PROXIES", "proxy.local", `--trusted-proxies (from VOICEAPI_TRUSTED_PROXIES): "proxy.local" is neither a CIDR range`},
		{"VOICEAPI_LOG_LEVEL", "loud", `--log-level (from VOICEAPI_LOG_LEVEL): "loud": want debug, info, warn or error`},
		// A flag checked with others: the refusal is the faulty one's alone, named with its
		// variable. It named the group's first flag before, whatever its source.
		{"VOICEAPI_MAX_JSON_BODY", "-1", "--max-json-body (from VOICEAPI_MAX_JSON_BODY): must be 0 or more"},
		{"VOICEAPI_LOGIN_RATE_LIMIT", "-1", "--login-rate-limit (from VOICEAPI_LOGIN_RATE_LIMIT): must be 0 (off) or more"},
		{"VOICEAPI_LOGIN_ADDRESS_RATE_LIMIT", "-5", "--login-address-rate-limit (from VOICEAPI_LOGIN_ADDRESS_RATE_LIMIT): must be 0 (off) or more"},
		{"VOICEAPI_LOGIN_ADDRESS_RATE_LIMIT", "ten", `VOICEAPI_LOGIN_ADDRESS_RATE_LIMIT: invalid value "ten" for --login-address-rate-limit: want a whole number`},
		{"VOICEAPI_IDLE_TIMEOUT", "0s", "--idle-timeout (from VOICEAPI_IDLE_TIMEOUT): must be more than 0"},
		{"VOICEAPI_EMBEDDINGS_URL", "https://embed.example.com/v1", "--embeddings-url (from VOICEAPI_EMBEDDINGS_URL): needs --embeddings-model: give both or neither"},
	} {
		t.Setenv(c.env, c.value)
		_, _, err := run(t, "", "serve", "--data", t.TempDir(), "--addr", "127.0.0.1:0")
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%s=%s: %v, want %q", c.env, c.value, err, c.want)
		}
		os.Unsetenv(c.env) // t.Setenv puts it back at the end
	}
	if _, _, err := run(t, "", "serve", "--data", t.TempDir(), "--addr", "127.0.0.1:0", "--login-ttl", "0s"); err == nil || !strings.HasPrefix(err.Error(), "--login-ttl must be more than 0") {
		t.Errorf("from the command line: %v", err)
	}
	// A good value from the environment does not take the blame for a bad one given on
	// the command line: "--max-import-body (from VOICEAPI_MAX_IMPORT_BODY): , --max-json-body, …" before.
	t.Setenv("VOICEAPI_MAX_IMPORT_BODY", "1000")
	if _, _, err := run(t, "", "serve", "--data", t.TempDir(), "--addr", "127.0.0.1:0", "--max-json-body", "-1"); err == nil || !strings.HasPrefix(err.Error(), "--max-json-body must be 0 or more") {
		t.Errorf("a bad --max-json-body beside VOICEAPI_MAX_IMPORT_BODY: %v", err)
	}
}

// TestServeLoginAddressRateLimit: the per-address bound of failed logins is ten times
// --login-rate-limit unless given (Config's 0), off when given 0 (Config's negative),
// and the given number otherwise, from the command line or the environment.
func TestServeLoginAddressRateLimit(t *testing.T) {
	for _, c := range []struct {
		args []string
		env  string
		want int
	}{
		{nil, "", 0},
		{[]string{"--login-address-rate-limit", "0"}, "", -1},
		{[]string{"--login-address-rate-limit", "250"}, "", 250},
		{nil, "40", 40},
	} {
		if c.env != "" {
			t.Setenv("VOICEAPI_LOGIN_ADDRESS_RATE_LIMIT", c.env)
		}
		var o serveOptions
		f := pflag.NewFlagSet("serve", pflag.ContinueOnError)
		o.register(f)
		if err := f.Parse(c.args); err != nil {
			t.Fatal(err)
		}
		if err := bindEnv(f); err != nil {
			t.Fatal(err)
		}
		var cfg server.Config
		o.rateLimits(&cfg)
		if cfg.LoginAddressRateLimit != c.want {
			t.Errorf("%v, VOICEAPI_LOGIN_ADDRESS_RATE_LIMIT=%q: Config.LoginAddressRateLimit %d, want %d", c.args, c.env, cfg.LoginAddressRateLimit, c.want)
		}
		os.Unsetenv("VOICEAPI_LOGIN_ADDRESS_RATE_LIMIT")
	}
}
