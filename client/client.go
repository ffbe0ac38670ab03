// Package client is the Go client of the voiceapi REST API.
//
// It is written by hand rather than generated, and that is deliberate: every request and
// response body is a type of package data, the very type the server decodes and encodes
// with the same JSON tags, so client and server cannot drift on a shape. A generator would
// give a second, parallel set of types (and today's oapi-codegen cannot even compile the
// document's multipart upload body). What a generator would prove — that every operation
// of the OpenAPI document has a method — is proved instead by a test: operations (the
// route table in routes.go) names the method, HTTP method and path of every call the
// client makes, and TestClientCoversDocument compares it, both ways, with
// docs/openapi.json and checks that each named method exists.
//
// Conventions of the client:
//   - Every method takes a context and, last, optional RequestOptions:
//     WithIdempotencyKey for creating POSTs and IfMatch for conditional writes.
//   - Methods whose response carries an ETag (single records) return it, so it can be
//     handed back in IfMatch: a write then fails with a 412 *Error instead of overwriting
//     a change made meanwhile.
//   - A failure the server answered is an *Error (errors.As) with the HTTP status, the
//     error code, the message and the per-field messages of a 422.
//   - Lists come as one page (List, with a data.PageRequest) or as a range-over-func
//     iterator (All) that follows next_cursor until the end.
//   - Requests that are safe to repeat are retried on 429 and 5xx with exponential
//     backoff and full jitter, honouring Retry-After: GET, HEAD, PUT and DELETE, and a
//     POST only when it carries an Idempotency-Key and its route honours one (the server
//     then answers a repeat with the first result). Any other POST is sent once. A
//     language model provider's failure (502 provider_error, 504 provider_timeout) is
//     never retried: it is the model's answer, and another attempt another model call.
package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"math/rand/v2"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/voiceapi/voiceapi/data"
)

// Client talks to one voiceapi server with one token. It is safe for concurrent use.
type Client struct {
	base  *url.URL
	token string
	http  *http.Client
	retry RetryPolicy
	// pageSize is the per_page of the All iterators.
	pageSize int
	// sleep waits between attempts; tests replace it to move a server clock instead.
	sleep func(ctx context.Context, d time.Duration) error

	Auth           *AuthService
	APIKeys        *APIKeysService
	Users          *UsersService
	Workspaces     *WorkspacesService
	Agents         *AgentsService
	KnowledgeBases *KnowledgeBasesService
	Numbers        *NumbersService
	Calls          *CallsService
	Webhooks       *WebhooksService
	Audit          *AuditService
	Analytics      *AnalyticsService
	Subscription   *SubscriptionService
	Prices         *PricesService
	Operations     *OperationsService
	Conversations  *ConversationsService
	Jobs           *JobsService
	AgentTests     *AgentTestsService
	TestRuns       *TestRunsService
	Campaigns      *CampaignsService
}

// RetryPolicy says how often and how long failed requests are retried.
type RetryPolicy struct {
	// MaxAttempts is the number of attempts in all, the first included; 1 turns retries off.
	MaxAttempts int
	// BaseDelay is the first backoff; each further one doubles, up to MaxDelay, and the
	// wait is a random duration up to it (full jitter).
	BaseDelay time.Duration
	MaxDelay  time.Duration
	// MaxRetryAfter is the longest Retry-After honoured; a longer one ends the retries
	// and returns the 429 or 503.
	MaxRetryAfter time.Duration
}

// DefaultRetryPolicy is 4 attempts, backoff from 250 ms up to 8 s, Retry-After up to a minute.
var DefaultRetryPolicy = RetryPolicy{MaxAttempts: 4, BaseDelay: 250 * time.Millisecond, MaxDelay: 8 * time.Second, MaxRetryAfter: time.Minute}

// Option configures a Client.
type Option func(*Client)

// WithToken sets the bearer token (an API key's `<id>|<secret>` or a login token).
func WithToken(token string) Option { return func(c *Client) { c.token = token } }

// WithHTTPClient sets the HTTP client; http.DefaultClient otherwise, which has no timeout:
// bound each call with its context.
func WithHTTPClient(h *http.Client) Option { return func(c *Client) { c.http = h } }

// WithRetryPolicy replaces DefaultRetryPolicy.
func WithRetryPolicy(p RetryPolicy) Option { return func(c *Client) { c.retry = p } }

// WithPageSize sets the per_page the All iterators ask for (1 to 100; 100 by default).
func WithPageSize(n int) Option { return func(c *Client) { c.pageSize = n } }

// New returns a client of the server at baseURL (scheme, host and port, e.g.
// "http://localhost:8080"; the paths of the API are added to it).
func New(baseURL string, opts ...Option) (*Client, error) {
	u, err := url.Parse(strings.TrimRight(baseURL, "/"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("client: the server URL %q must be http:// or https:// with a host", baseURL)
	}
	c := &Client{base: u, http: http.DefaultClient, retry: DefaultRetryPolicy, pageSize: 100, sleep: sleepCtx}
	for _, o := range opts {
		o(c)
	}
	if c.retry.MaxAttempts < 1 {
		c.retry.MaxAttempts = 1
	}
	c.Auth, c.APIKeys, c.Users = &AuthService{c}, &APIKeysService{c}, &UsersService{c}
	c.Workspaces, c.Agents, c.KnowledgeBases = &WorkspacesService{c}, &AgentsService{c}, &KnowledgeBasesService{c}
	c.Numbers, c.Calls, c.Webhooks = &NumbersService{c}, &CallsService{c}, &WebhooksService{c}
	c.Audit, c.Analytics, c.Subscription = &AuditService{c}, &AnalyticsService{c}, &SubscriptionService{c}
	c.Prices = &PricesService{c}
	c.Operations, c.Conversations, c.Jobs = &OperationsService{c}, &ConversationsService{c}, &JobsService{c}
	c.AgentTests, c.TestRuns = &AgentTestsService{c}, &TestRunsService{c}
	c.Campaigns = &CampaignsService{c}
	return c, nil
}

// Error is a failure the server answered in the error shape of conventions §2.
type Error struct {
	// StatusCode is the HTTP status (404, 412, 422, ...).
	StatusCode int
	// Code is the error code: not_found, validation_failed, precondition_failed, ...
	Code    string
	Message string
	// Fields are the messages per field of a validation failure, keyed by dot path.
	Fields map[string][]string
	// RequestID is the X-Request-Id of the failed request, to quote in a report.
	RequestID string
	// RetryAfter is the server's Retry-After, when it sent one (429, 503).
	RetryAfter time.Duration
}

// Error words the failure with its status, code and messages.
func (e *Error) Error() string {
	if len(e.Fields) == 0 {
		return fmt.Sprintf("%d %s: %s", e.StatusCode, e.Code, e.Message)
	}
	// The field messages name their fields; the message is usually one of them.
	var msgs []string
	for _, p := range slices.Sorted(maps.Keys(e.Fields)) {
		for _, m := range e.Fields[p] {
			if !strings.Contains(m, p) {
				m = p + ": " + m
			}
			msgs = append(msgs, m)
		}
	}
	return fmt.Sprintf("%d %s: %s", e.StatusCode, e.Code, strings.Join(msgs, " "))
}

// IsCode reports whether err is an *Error with the given code (data.ENOTFOUND, ...).
func IsCode(err error, code string) bool {
	var e *Error
	return errors.As(err, &e) && e.Code == code
}

// RequestOption adjusts one request.
type RequestOption func(*requestOptions)

type requestOptions struct {
	idempotencyKey string
	ifMatch        string
	header         http.Header
}

// WithIdempotencyKey sends Idempotency-Key: a repeat of the request with the same key and
// body gets the first response instead of creating twice (conventions §17), and makes a
// POST safe to retry.
func WithIdempotencyKey(key string) RequestOption {
	return func(o *requestOptions) { o.idempotencyKey = key }
}

// IfMatch sends If-Match: the write happens only while the record's ETag is still etag,
// else it fails with a 412 *Error (code precondition_failed).
func IfMatch(etag string) RequestOption { return func(o *requestOptions) { o.ifMatch = etag } }

// WithHeader adds a header to the request.
func WithHeader(name, value string) RequestOption {
	return func(o *requestOptions) {
		if o.header == nil {
			o.header = http.Header{}
		}
		o.header.Add(name, value)
	}
}

// request is one call about to be sent.
type request struct {
	op          string // the operation id in operations
	pathArgs    []string
	query       url.Values
	body        []byte
	contentType string
	opts        []RequestOption
	// sink, when set, receives a successful response's body as it streams (downloads),
	// instead of it being read into memory.
	sink io.Writer
}

// response is a finished call with a status under 300 (or 304).
type response struct {
	status  int
	header  http.Header
	trailer http.Header // a streamed body's trailers, read once it ended
	body    []byte
}

// do sends r, retrying it as the retry policy and its method allow, and returns the
// response or the *Error the server answered.
func (c *Client) do(ctx context.Context, r request) (*response, error) {
	op, ok := operations[r.op]
	if !ok {
		panic("client: unknown operation " + r.op) // a bug in this package
	}
	var o requestOptions
	for _, f := range r.opts {
		f(&o)
	}
	u, err := c.url(op.Path, r.pathArgs, r.query)
	if err != nil {
		return nil, err
	}
	retriable := op.Method != http.MethodPost || (o.idempotencyKey != "" && op.Idempotent)
	for attempt := 1; ; attempt++ {
		resp, err := c.send(ctx, op.Method, u, r, &o)
		if err == nil {
			return resp, nil
		}
		wait, again := c.retryDelay(err, attempt, retriable)
		if !again {
			return nil, err
		}
		if serr := c.sleep(ctx, wait); serr != nil {
			return nil, err
		}
	}
}

// send makes one attempt.
func (c *Client) send(ctx context.Context, method, u string, r request, o *requestOptions) (*response, error) {
	var body io.Reader
	if r.body != nil {
		body = bytes.NewReader(r.body)
	}
	req, err := http.NewRequestWithContext(ctx, method, u, body)
	if err != nil {
		return nil, err
	}
	if r.body != nil {
		req.Header.Set("Content-Type", r.contentType)
	}
	req.Header.Set("Accept", "application/json")
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	if o.idempotencyKey != "" {
		req.Header.Set("Idempotency-Key", o.idempotencyKey)
	}
	if o.ifMatch != "" {
		req.Header.Set("If-Match", o.ifMatch)
	}
	for k, vs := range o.header {
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	res, err := c.http.Do(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	if r.sink != nil && res.StatusCode < 300 {
		if _, err := io.Copy(r.sink, res.Body); err != nil {
			return nil, fmt.Errorf("client: reading the response of %s %s: %w: %w", method, req.URL.Path, errPartialBody, err)
		}
		return &response{status: res.StatusCode, header: res.Header, trailer: res.Trailer}, nil
	}
	raw, err := io.ReadAll(res.Body)
	if err != nil {
		return nil, fmt.Errorf("client: reading the response of %s %s: %w", method, req.URL.Path, err)
	}
	if res.StatusCode >= 300 && res.StatusCode != http.StatusNotModified {
		return nil, decodeError(res, raw)
	}
	return &response{status: res.StatusCode, header: res.Header, body: raw}, nil
}

// errPartialBody marks a download cut after part of it reached the sink: a retry would
// write it there a second time.
var errPartialBody = errors.New("the body was cut after part of it was written")

// decodeError turns a failed response into an *Error; a body that is not the error
// shape (a proxy's page) keeps the status with the code "http_<status>".
func decodeError(res *http.Response, raw []byte) *Error {
	var b struct {
		Message string              `json:"message"`
		Code    string              `json:"code"`
		Errors  map[string][]string `json:"errors"`
	}
	e := &Error{StatusCode: res.StatusCode, RequestID: res.Header.Get("X-Request-Id")}
	if data.DecodeJSON(raw, &b) == nil && b.Code != "" {
		e.Code, e.Message, e.Fields = b.Code, b.Message, b.Errors
	} else {
		e.Code = "http_" + strconv.Itoa(res.StatusCode)
		e.Message = strings.TrimSpace(string(raw))
		if len(e.Message) > 200 {
			e.Message = e.Message[:200]
		}
		if e.Message == "" {
			e.Message = http.StatusText(res.StatusCode)
		}
	}
	e.RetryAfter = parseRetryAfter(res.Header.Get("Retry-After"), time.Now())
	return e
}

// parseRetryAfter reads Retry-After as seconds or an HTTP date; 0 when absent or bad.
func parseRetryAfter(v string, now time.Time) time.Duration {
	if v == "" {
		return 0
	}
	// delay-seconds is digits only (RFC 9110), so no sign; a count of seconds longer than
	// any Duration reads as the longest, which MaxRetryAfter then refuses to wait, where the
	// product would wrap to a negative or a short delay and retry at once. (The digits are
	// checked first: ParseUint reports an overflow before it reaches a trailing non-digit.)
	if strings.Trim(v, "0123456789") == "" {
		s, err := strconv.ParseUint(v, 10, 64)
		if err != nil || s > uint64(math.MaxInt64/time.Second) {
			return math.MaxInt64
		}
		return time.Duration(s) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}

// retryDelay says whether a failed attempt is retried and after how long: only retriable
// requests, only on 429 and 5xx (or a transport error), and only within the policy.
func (c *Client) retryDelay(err error, attempt int, retriable bool) (time.Duration, bool) {
	if !retriable || attempt >= c.retry.MaxAttempts {
		return 0, false
	}
	var e *Error
	if errors.As(err, &e) {
		if e.StatusCode != http.StatusTooManyRequests && e.StatusCode < 500 {
			return 0, false
		}
		if e.Code == data.EPROVIDER || e.Code == data.EPROVIDERTIMEOUT {
			// A language model provider's failure is its answer, not the network's: each
			// attempt would call the model again (after a timeout, wait its whole span
			// again), so whether to is the caller's choice.
			return 0, false
		}
		if e.RetryAfter > 0 {
			return e.RetryAfter, e.RetryAfter <= c.retry.MaxRetryAfter
		}
	} else if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, errPartialBody) {
		return 0, false
	}
	return backoff(c.retry, attempt), true
}

// backoff is full jitter over an exponential ceiling: uniformly random in
// [0, min(MaxDelay, BaseDelay·2^(attempt-1))], so clients that failed together do not
// retry together.
func backoff(p RetryPolicy, attempt int) time.Duration {
	ceiling := p.BaseDelay << min(attempt-1, 30)
	if ceiling <= 0 || ceiling > p.MaxDelay {
		ceiling = p.MaxDelay
	}
	if ceiling <= 0 {
		return 0
	}
	return rand.N(ceiling + 1)
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// url fills the path template's {params} with args in order and adds query. An argument
// is one path segment: a "/" or "?" in it is escaped, never a separator.
func (c *Client) url(template string, args []string, query url.Values) (string, error) {
	var plain, escaped strings.Builder
	rest := template
	for _, a := range args {
		i := strings.IndexByte(rest, '{')
		j := strings.IndexByte(rest, '}')
		if i < 0 || j < i {
			return "", fmt.Errorf("client: too many path arguments for %s", template)
		}
		if a == "" {
			return "", fmt.Errorf("client: %s needs a non-empty %s", template, rest[i+1:j])
		}
		plain.WriteString(rest[:i] + a)
		escaped.WriteString(rest[:i] + url.PathEscape(a))
		rest = rest[j+1:]
	}
	if strings.IndexByte(rest, '{') >= 0 {
		return "", fmt.Errorf("client: missing path arguments for %s", template)
	}
	plain.WriteString(rest)
	escaped.WriteString(rest)
	u := *c.base
	u.Path = strings.TrimRight(c.base.Path, "/") + plain.String()
	u.RawPath = strings.TrimRight(c.base.EscapedPath(), "/") + escaped.String()
	u.RawQuery = ""
	if len(query) > 0 {
		u.RawQuery = query.Encode()
	}
	return u.String(), nil
}

// jsonBody encodes a request body; data's update types (data.Opt fields) are encoded by
// encodeBody so that only the set members are sent.
func jsonBody(v any) ([]byte, error) {
	b, err := encodeBody(v)
	if err != nil {
		return nil, fmt.Errorf("client: encoding the request body: %w", err)
	}
	return b, nil
}

// record decodes {"data": T} and returns the record and the response's ETag.
func record[T any](res *response) (*T, string, error) {
	var env struct {
		Data *T `json:"data"`
		// Access is what the caller may do with the record, beside it (knowledge bases
		// and numbers): kept on the record's Access.
		Access json.RawMessage `json:"access"`
	}
	if err := data.DecodeJSON(res.body, &env); err != nil {
		return nil, "", fmt.Errorf("client: decoding the response: %w", err)
	}
	if env.Data == nil {
		return nil, "", errors.New("client: the response has no data")
	}
	if env.Access != nil {
		var err error
		switch r := any(env.Data).(type) {
		case *data.KnowledgeBase:
			err = data.DecodeJSON(env.Access, &r.Access)
		case *data.Number:
			err = data.DecodeJSON(env.Access, &r.Access)
		}
		if err != nil {
			return nil, "", fmt.Errorf("client: decoding the response's access: %w", err)
		}
	}
	return env.Data, res.header.Get("ETag"), nil
}

// list decodes {"data": [T], "meta": page}.
func list[T any](res *response) ([]*T, data.Page, error) {
	var env struct {
		Data []*T      `json:"data"`
		Meta data.Page `json:"meta"`
		// Access is what the caller may do with each item, by id, beside a list of
		// numbers: kept on each number's Access.
		Access map[string]data.NumberAccess `json:"access"`
	}
	if err := data.DecodeJSON(res.body, &env); err != nil {
		return nil, data.Page{}, fmt.Errorf("client: decoding the response: %w", err)
	}
	for _, it := range env.Data {
		if n, ok := any(it).(*data.Number); ok && n != nil {
			n.Access = env.Access[n.ID]
		}
	}
	return env.Data, env.Meta, nil
}

// pageQuery adds per_page and cursor to q.
func pageQuery(q url.Values, p data.PageRequest) url.Values {
	if q == nil {
		q = url.Values{}
	}
	if p.PerPage > 0 {
		q.Set("per_page", strconv.Itoa(p.PerPage))
	}
	if p.Cursor != "" {
		q.Set("cursor", p.Cursor)
	}
	return q
}
