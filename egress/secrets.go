package egress

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
)

// Secret is a credential the sandbox never sees: its environment holds
// Placeholder, and requests to one of Hosts over TLS carry Value in its
// place. Secrets live in memory only (never in the vfs, a StateRef, a
// snapshot, the write log, meta or a log line), so a node restart loses
// them and the platform sets them again.
type Secret struct {
	Name        string
	Value       string
	Hosts       []Rule // name rules: the hosts it may be sent to
	Placeholder string
	// Body also replaces the placeholder in request bodies (default:
	// headers, including Basic credentials, and the query only).
	Body bool
}

var secretNameRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,127}$`)

// maxBodyRewrite bounds the body read to swap a secret in.
const maxBodyRewrite = 8 << 20

// NewSecret makes a secret with a fresh placeholder
// (warren-secret-NAME-RANDOM, 128 random bits).
func NewSecret(name, value string, hosts []string, body bool) (Secret, error) {
	if !secretNameRE.MatchString(name) {
		return Secret{}, fmt.Errorf("secret name %q: want an environment variable name", name)
	}
	if value == "" || len(value) > 64<<10 {
		return Secret{}, fmt.Errorf("secret %s: value must be 1 byte to 64 KiB", name)
	}
	if len(hosts) == 0 {
		return Secret{}, fmt.Errorf("secret %s: no hosts to send it to", name)
	}
	s := Secret{Name: name, Value: value, Body: body}
	for _, h := range hosts {
		r, err := ParseRule(h)
		if err != nil {
			return Secret{}, fmt.Errorf("secret %s: %w", name, err)
		}
		if r.name == "" && r.suffix == "" {
			return Secret{}, fmt.Errorf("secret %s: host %q: secrets go to names (example.com, *.example.com), which TLS verifies", name, h)
		}
		s.Hosts = append(s.Hosts, r)
	}
	var b [16]byte
	rand.Read(b[:])
	s.Placeholder = "warren-secret-" + name + "-" + hex.EncodeToString(b[:])
	return s, nil
}

// SetSecrets replaces the sandbox's secrets.
func (s *Sandbox) SetSecrets(secrets []Secret) {
	cp := append([]Secret(nil), secrets...)
	s.secrets.Store(&cp)
}

// Secrets returns the sandbox's secrets.
func (s *Sandbox) Secrets() []Secret {
	if p := s.secrets.Load(); p != nil {
		return *p
	}
	return nil
}

// inject swaps in the values of the secrets bound to req's host. Only
// requests over TLS to a host named by the secret get them: anywhere else
// the placeholder goes out as it is.
func (s *Sandbox) inject(req *http.Request, port int) error {
	if req.URL.Scheme != "https" {
		return nil
	}
	name := strings.ToLower(req.URL.Hostname())
	var use []Secret
	for _, sec := range s.Secrets() {
		for _, r := range sec.Hosts {
			if r.matchName(name, port) {
				use = append(use, sec)
				break
			}
		}
	}
	if len(use) == 0 {
		return nil
	}
	swap := func(v string) string {
		for _, sec := range use {
			v = strings.ReplaceAll(v, sec.Placeholder, sec.Value)
		}
		return v
	}
	for k, vs := range req.Header {
		for i, v := range vs {
			// curl -u user:$TOKEN sends the placeholder base64-encoded.
			if strings.EqualFold(k, "Authorization") && len(v) > 6 && strings.EqualFold(v[:6], "basic ") {
				if dec, err := base64.StdEncoding.DecodeString(strings.TrimSpace(v[6:])); err == nil {
					if sw := swap(string(dec)); sw != string(dec) {
						vs[i] = "Basic " + base64.StdEncoding.EncodeToString([]byte(sw))
						continue
					}
				}
			}
			vs[i] = swap(v)
		}
	}
	req.URL.RawQuery = swap(req.URL.RawQuery)
	body := false
	for _, sec := range use {
		body = body || sec.Body
	}
	if body && req.Body != nil && req.Body != http.NoBody {
		data, err := io.ReadAll(io.LimitReader(req.Body, maxBodyRewrite+1))
		req.Body.Close()
		if err != nil {
			return fmt.Errorf("reading the request body: %w", err)
		}
		if len(data) > maxBodyRewrite {
			return fmt.Errorf("request body over %d bytes: too large to swap secrets into", maxBodyRewrite)
		}
		for _, sec := range use {
			data = bytes.ReplaceAll(data, []byte(sec.Placeholder), []byte(sec.Value))
		}
		req.Body = io.NopCloser(bytes.NewReader(data))
		req.ContentLength = int64(len(data))
		req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil }
	}
	return nil
}
