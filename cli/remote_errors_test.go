package cli

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestUnreachableServer: a server that cannot be reached is said in words, naming the
// server and why, with what the command adds around it kept (campaign create's key to
// run again with), exit status 1 and the client's error still behind it.
func TestUnreachableServer(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	server := "http://" + l.Addr().String()
	l.Close() // nothing listens there now: connection refused
	csv := filepath.Join(t.TempDir(), "r.csv")
	if err := os.WriteFile(csv, []byte("phone_number\n+14155550101\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	want := "cannot reach the server at " + server + " (connection refused): is it running, and is that its address (--server, VOICEAPI_SERVER)?"
	for _, c := range []struct {
		args  []string
		after string
	}{
		{[]string{"jobs", "list"}, ""},
		{[]string{"chat", "agt_01JD6000000000000000000000"}, ""},
		{[]string{"campaign", "create", "--agent", "agt_01JD6000000000000000000000", "--from-number", "num_01JD6000000000000000000000",
			"--window", "mon-fri 09:00-17:00", "--max-concurrent", "1", "--recipients", csv, "--idempotency-key", "k1"},
			"\nWhether it was made is not known: run the command again with --idempotency-key k1 to make it at most once"},
	} {
		_, _, err := run(t, "", append(c.args, "--server", server, "--token", "1|x")...)
		var ue *url.Error
		if err == nil || err.Error() != want+c.after || ExitCode(err) != 1 || !errors.As(err, &ue) {
			t.Errorf("%s: %v, want %q", strings.Join(c.args[:2], " "), err, want+c.after)
		}
	}
	// A command's own --timeout, or Ctrl-C, ending a request is no unreachable server.
	for _, cause := range []error{context.DeadlineExceeded, context.Canceled} {
		err := &url.Error{Op: "Get", URL: server + "/api/v1/jobs/job_1", Err: cause}
		if got := unreachableError(err); got != error(err) {
			t.Errorf("%v reworded as %q", cause, got)
		}
	}
}

// TestNotVoiceapiAnswer: a page that is not voiceapi's error shape (a proxy's 502, another
// program on the port) is said to be one, its text on one line, not dumped as HTML.
func TestNotVoiceapiAnswer(t *testing.T) {
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(http.StatusBadGateway)
		w.Write([]byte("<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n"))
	}))
	defer proxy.Close()
	_, _, err := run(t, "", "campaign", "show", "cmp_1", "--server", proxy.URL+"/", "--token", "1|x")
	want := "the server at " + proxy.URL + " answered 502 Bad Gateway with a page that is not voiceapi's (502 Bad Gateway 502 Bad Gateway nginx): " +
		"is that the address of a voiceapi server (--server, VOICEAPI_SERVER), and is it up?"
	if err == nil || err.Error() != want || ExitCode(err) != 1 {
		t.Errorf("%v, want %q", err, want)
	}
}
