package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/document"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	"github.com/aws/smithy-go"
)

// bedrockClient speaks Bedrock's Converse and ConverseStream through the AWS SDK for Go
// v2, which signs each request (SigV4) and reads the event stream's binary framing.
type bedrockClient struct {
	*base
	model string
	api   *bedrockruntime.Client
	// creds are the credentials the requests are signed with, read again after a failure
	// to scrub them from its message when they came from the credential chain.
	creds aws.CredentialsProvider
}

// bedrockOpening is the user turn put before a conversation that does not start with one
// (an agent that speaks first): Converse requires the first message to be the user's.
const bedrockOpening = "(The conversation begins.)"

// bedrockEmptyResult stands for a tool's empty result: Converse refuses blank text.
const bedrockEmptyResult = "(no output)"

func newBedrock(b *base, cfg Config, opts Options) (Client, error) {
	if err := b.require([2]string{"model", cfg.Model}, [2]string{"region", cfg.Region}); err != nil {
		return nil, err
	}
	creds, err := b.bedrockCredentials(cfg, opts)
	if err != nil {
		return nil, err
	}
	o := bedrockruntime.Options{
		Region:      cfg.Region,
		Credentials: creds,
		HTTPClient:  &bedrockHTTP{b.http},
		Retryer:     aws.NopRetryer{},
	}
	if _, ok := opts.BaseURLs[b.provider]; ok {
		root, err := b.baseURL(opts, "")
		if err != nil {
			return nil, err
		}
		o.BaseEndpoint = aws.String(root)
	}
	api := bedrockruntime.New(o, func(o *bedrockruntime.Options) {
		// AWS_BEARER_TOKEN_BEDROCK in the server's environment would make the SDK send that
		// token instead of signing: an agent's requests are signed with its own credentials
		// or the operator's chain, as conventions §21 says.
		o.BearerAuthTokenProvider = nil
		o.AuthSchemePreference = nil
	})
	return &bedrockClient{base: b, model: cfg.Model, api: api, creds: creds}, nil
}

// bedrockCredentials: the agent's ACCESS_KEY_ID:SECRET_ACCESS_KEY (with an optional
// :SESSION_TOKEN), else the operator's provider, else the standard AWS credential chain.
func (b *base) bedrockCredentials(cfg Config, opts Options) (aws.CredentialsProvider, error) {
	if cfg.APIKey != "" {
		parts := strings.SplitN(cfg.APIKey, ":", 3)
		if len(parts) < 2 || parts[0] == "" || parts[1] == "" {
			return nil, b.configError("llm_config.api_key is not ACCESS_KEY_ID:SECRET_ACCESS_KEY")
		}
		token := ""
		if len(parts) == 3 {
			token = parts[2]
		}
		return credentials.NewStaticCredentialsProvider(parts[0], parts[1], token), nil
	}
	if opts.AWSCredentials != nil {
		return opts.AWSCredentials, nil
	}
	p, err := defaultAWSCredentials()
	if err != nil {
		return nil, b.configError("the AWS credential chain could not be loaded: " + err.Error())
	}
	return p, nil
}

// defaultChain is the standard AWS credential chain, loaded once: its cache keeps
// credentials from instance roles and SSO between completions.
var defaultChain struct {
	once     sync.Once
	provider aws.CredentialsProvider
	err      error
}

func defaultAWSCredentials() (aws.CredentialsProvider, error) {
	defaultChain.once.Do(func() {
		cfg, err := config.LoadDefaultConfig(context.Background())
		defaultChain.provider, defaultChain.err = cfg.Credentials, err
		if err == nil && cfg.Credentials == nil {
			defaultChain.err = errors.New("no credentials are configured")
		}
	})
	return defaultChain.provider, defaultChain.err
}

// bedrockHTTP hands failed answers to fail as *statusError (code from X-Amzn-ErrorType),
// and reads a whole answer before the SDK does, so a cut body is told from a malformed one.
type bedrockHTTP struct{ c *http.Client }

func (h *bedrockHTTP) Do(req *http.Request) (*http.Response, error) {
	// The SDK closes the request's body as soon as Do returns, while net/http may still be
	// reading it (to check it holds no more than its Content-Length): a server that answers
	// at once then sees the connection closed under its stream. The transport gets a body
	// of its own, the same bytes, that nothing closes early.
	if req.Body != nil && req.Body != http.NoBody {
		payload, err := io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return nil, err
		}
		req = req.Clone(req.Context())
		req.Body = io.NopCloser(bytes.NewReader(payload))
		req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(payload)), nil }
	}
	res, err := h.c.Do(req)
	if err != nil {
		return res, err
	}
	if res.StatusCode >= 400 {
		se := readStatusError(res)
		se.code, _, _ = strings.Cut(res.Header.Get("X-Amzn-ErrorType"), ":")
		return nil, se
	}
	if mt, _, _ := mime.ParseMediaType(res.Header.Get("Content-Type")); mt == "application/vnd.amazon.eventstream" {
		return res, nil
	}
	body, err := io.ReadAll(io.LimitReader(res.Body, maxAnswer))
	res.Body.Close()
	if err != nil {
		return nil, &cutError{msg: "the connection was cut before the reply was complete"}
	}
	res.Body = io.NopCloser(bytes.NewReader(body))
	return res, nil
}

// Complete implements Client.
func (c *bedrockClient) Complete(ctx context.Context, req Request, onText func(string) error) (*Reply, error) {
	ctx, cancel := context.WithTimeoutCause(ctx, c.timeout, errTimedOut)
	defer cancel()
	in, err := c.input(req)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	var reply *Reply
	if onText == nil {
		reply, err = c.converse(ctx, in)
	} else {
		reply, err = c.converseStream(ctx, in, onText, start)
	}
	if err != nil {
		return nil, c.fail(ctx, bedrockError(ctx, err), c.chainSecrets(ctx)...)
	}
	reply.Total = time.Since(start)
	if onText == nil || reply.FirstToken == 0 {
		reply.FirstToken = reply.Total
	}
	return reply, nil
}

// chainSecrets are the credentials of the chain or the operator's provider, to scrub from
// a failure's message (the agent's own are scrubbed from the start). The provider caches
// them: this reads no file and asks no service again.
func (c *bedrockClient) chainSecrets(ctx context.Context) []string {
	if len(c.secrets) > 0 {
		return nil
	}
	creds, err := c.creds.Retrieve(context.WithoutCancel(ctx))
	if err != nil {
		return nil
	}
	return []string{creds.AccessKeyID, creds.SecretAccessKey, creds.SessionToken}
}

func (c *bedrockClient) converse(ctx context.Context, in *bedrockruntime.ConverseInput) (*Reply, error) {
	out, err := c.api.Converse(ctx, in)
	if err != nil {
		return nil, err
	}
	msg, ok := out.Output.(*types.ConverseOutputMemberMessage)
	if !ok {
		return nil, &malformedError{"the answer has no message"}
	}
	reply := &Reply{StopReason: bedrockStopReason(out.StopReason), Usage: bedrockUsage(out.Usage)}
	var text strings.Builder
	for _, block := range msg.Value.Content {
		switch b := block.(type) {
		case *types.ContentBlockMemberText:
			text.WriteString(b.Value)
		case *types.ContentBlockMemberToolUse:
			args := "{}"
			if b.Value.Input != nil {
				raw, err := b.Value.Input.MarshalSmithyDocument()
				if err != nil {
					return nil, &malformedError{"a tool call's input is not JSON"}
				}
				args = string(raw)
			}
			reply.ToolCalls = append(reply.ToolCalls, ToolCall{ID: orNewCallID(aws.ToString(b.Value.ToolUseId)), Name: aws.ToString(b.Value.Name), Arguments: args})
		}
	}
	reply.Text = text.String()
	return reply, nil
}

// bedrockError tells what a failure of the SDK was: the failures bedrockHTTP, the stream
// and the connection report pass as they are; a body the SDK could not read is malformed.
func bedrockError(ctx context.Context, err error) error {
	var de *smithy.DeserializationError
	if ctx.Err() == nil && errors.As(err, &de) && !cutConnection(err) {
		return &malformedError{"the answer is not the JSON of a Converse response"}
	}
	return err
}

// bedrockStreamError tells what ended a ConverseStream early: a cut connection, an
// exception Bedrock sent in the stream (its code and message), or bytes that are not the
// event stream's framing.
func bedrockStreamError(err error) error {
	if cutConnection(err) {
		return err
	}
	var ae smithy.APIError
	if errors.As(err, &ae) {
		code := ae.ErrorCode()
		return &cutError{msg: code + ": " + ae.ErrorMessage(), permanent: !retryableException(code)}
	}
	return &malformedError{"an event of the stream could not be read: " + err.Error()}
}

// retryableException: the stream exceptions that say "try again".
func retryableException(code string) bool {
	switch strings.ToLower(code) {
	case "throttlingexception", "internalserverexception", "serviceunavailableexception",
		"modelstreamerrorexception", "modeltimeoutexception", "modelnotreadyexception":
		return true
	}
	return false
}

func bedrockStopReason(r types.StopReason) string {
	switch r {
	case types.StopReasonEndTurn, types.StopReasonStopSequence:
		return "stop"
	case types.StopReasonToolUse:
		return "tool_calls"
	case types.StopReasonMaxTokens, types.StopReasonModelContextWindowExceeded:
		return "length"
	}
	return "other"
}

func bedrockUsage(u *types.TokenUsage) Usage {
	if u == nil {
		return Usage{}
	}
	return Usage{InputTokens: int(aws.ToInt32(u.InputTokens)), OutputTokens: int(aws.ToInt32(u.OutputTokens))}
}

// toolInput parses a call's arguments into the object Converse carries; arguments that
// are not a JSON object (a model's broken call, answered with an error) go as {}.
func toolInput(args string) document.Interface {
	var v map[string]any
	if json.Unmarshal([]byte(args), &v) != nil || v == nil {
		v = map[string]any{}
	}
	return document.NewLazyDocument(v)
}

// toolInputSchema is a tool's parameters as Converse's inputSchema.json document.
func toolInputSchema(params map[string]any) document.Interface {
	return document.NewLazyDocument(schemaOrEmpty(params))
}
