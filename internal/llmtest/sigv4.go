package llmtest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/textproto"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
)

// sigV4Skew is how far a request's X-Amz-Date may be from the stand-in's clock, as AWS
// allows.
const sigV4Skew = 5 * time.Minute

// The answers AWS gives to bad credentials: scenarios, not deviations.
var (
	unknownKey = refusal{status: http.StatusForbidden, kind: "UnrecognizedClientException", message: "The security token included in the request is invalid."}
	badSecret  = refusal{status: http.StatusForbidden, kind: "InvalidSignatureException", message: "The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method. Consult the service documentation for details."}
)

// checkSignature verifies a request's SigV4 signature the only way a server can: it signs
// the received request again, with the AWS SDK's own signer, the stand-in's credentials
// and the request's signed headers, date and body, and compares. A signature that matches
// proves the method, path, query, signed headers and body are what the client signed.
func (p *bedrockProtocol) checkSignature(s *Server, r *http.Request, body []byte) *refusal {
	auth := r.Header.Get("Authorization")
	scheme, params, ok := strings.Cut(auth, " ")
	if !ok || scheme != "AWS4-HMAC-SHA256" {
		return s.deviation(http.StatusForbidden, "MissingAuthenticationTokenException", "Authorization %q is not a SigV4 signature", auth)
	}
	fields := map[string]string{}
	for _, f := range strings.Split(params, ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(f), "=")
		fields[k] = v
	}
	scope := strings.Split(fields["Credential"], "/")
	signed := strings.Split(fields["SignedHeaders"], ";")
	if len(scope) != 5 || scope[4] != "aws4_request" || fields["Signature"] == "" {
		return s.deviation(http.StatusForbidden, "IncompleteSignatureException", "Authorization %q lacks a credential scope or signature", auth)
	}
	akid, secret, _ := strings.Cut(s.APIKey, ":")
	if scope[0] != akid {
		return &unknownKey
	}
	if scope[2] != s.Region || scope[3] != "bedrock" {
		return s.deviation(http.StatusForbidden, "InvalidSignatureException", "credential scoped to region %s, service %s; want %s, bedrock", scope[2], scope[3], s.Region)
	}
	for _, h := range []string{"host", "x-amz-date"} {
		if !slices.Contains(signed, h) {
			return s.deviation(http.StatusForbidden, "InvalidSignatureException", "%s is not signed (SignedHeaders %s)", h, fields["SignedHeaders"])
		}
	}
	if token := r.Header.Get("X-Amz-Security-Token"); token != s.SessionToken {
		return &unknownKey
	} else if token != "" && !slices.Contains(signed, "x-amz-security-token") {
		return s.deviation(http.StatusForbidden, "InvalidSignatureException", "the session token is not signed")
	}
	when, err := time.Parse("20060102T150405Z", r.Header.Get("X-Amz-Date"))
	if err != nil || when.Format("20060102") != scope[1] {
		return s.deviation(http.StatusForbidden, "InvalidSignatureException", "X-Amz-Date %q does not match the credential scope's date %s", r.Header.Get("X-Amz-Date"), scope[1])
	}
	if d := time.Since(when); d > sigV4Skew || d < -sigV4Skew {
		return &refusal{status: http.StatusForbidden, kind: "InvalidSignatureException", message: "Signature expired"}
	}
	again, err := http.NewRequest(r.Method, "http://"+r.Host+r.URL.RequestURI(), bytes.NewReader(body))
	if err != nil {
		return s.deviation(http.StatusBadRequest, "ValidationException", "the request URI cannot be signed again: %v", err)
	}
	again.ContentLength = 0
	for _, h := range signed {
		switch h {
		case "host":
		case "content-length":
			again.ContentLength = int64(len(body))
		default:
			again.Header[textproto.CanonicalMIMEHeaderKey(h)] = r.Header.Values(h)
		}
	}
	sum := sha256.Sum256(body)
	creds := aws.Credentials{AccessKeyID: akid, SecretAccessKey: secret, SessionToken: s.SessionToken}
	if err := v4.NewSigner().SignHTTP(context.Background(), creds, again, hex.EncodeToString(sum[:]), "bedrock", s.Region, when); err != nil {
		return s.deviation(http.StatusBadRequest, "ValidationException", "signing again: %v", err)
	}
	if again.Header.Get("Authorization") != auth {
		return &badSecret
	}
	return nil
}
