package cli

import (
	"context"
	"io"
	"strings"
	"testing"
)

// TestServeRefusesBadTrustedProxiesAndTimeouts: a bad --trusted-proxies range or a
// timeout of 0 stops serve before it opens anything, with a message naming the flag.
func TestServeRefusesBadTrustedProxiesAndTimeouts(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--trusted-proxies", "10.0.0.0/33"}, `--trusted-proxies: "10.0.0.0/33" is not a CIDR range`},
		{[]string{"--trusted-proxies", "10.0.0.0/8,proxy.local"}, `--trusted-proxies: "proxy.local" is neither a CIDR range`},
		{[]string{"--read-header-timeout", "0s"}, "--read-header-timeout, --read-timeout, --write-timeout and --idle-timeout must be more than 0"},
		{[]string{"--write-timeout", "-1s"}, "must be more than 0"},
	} {
		dir := t.TempDir()
		o := testServeOptions(t, dir, c.args...)
		err := runServe(context.Background(), o, io.Discard, io.Discard)
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
