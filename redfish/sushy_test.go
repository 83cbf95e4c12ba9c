package redfish

import (
	"context"
	"crypto/tls"
	"encoding/base64"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sno-iso/sno-iso/redfish/redfishtest"
)

// The body sushy-tools sends for a failed image fetch: the reason is only in error.message.
func TestExplanationKeepsTheMessage(t *testing.T) {
	for _, tt := range []struct{ name, body, want string }{
		{"sushy-tools GeneralError", `{"error":{"code":"Base.1.0.GeneralError","message":"Cannot download virtual media: got error 404 from the server",` +
			`"@Message.ExtendedInfo":[{"MessageId":"Base.1.0.GeneralError"}]}}`,
			"Cannot download virtual media: got error 404 from the server [Base.1.0.GeneralError]"},
		{"message and extended messages", `{"error":{"code":"Base.1.8.GeneralError","message":"The request failed.",` +
			`"@Message.ExtendedInfo":[{"MessageId":"Base.1.8.PropertyMissing","Message":"The property Image is missing."}]}}`,
			"The request failed.; The property Image is missing. [Base.1.8.PropertyMissing]"},
		{"a pointer to the extended messages is left out", `{"error":{"code":"Base.1.0.GeneralError","message":"See @Message.ExtendedInfo for more information.",` +
			`"@Message.ExtendedInfo":[{"MessageId":"IDRAC.2.9.SYS518","Message":"iDRAC is busy."}]}}`,
			": iDRAC is busy. [IDRAC.2.9.SYS518]"},
		{"the same text once", `{"error":{"code":"X.1","message":"Media is in use.","@Message.ExtendedInfo":[{"MessageId":"X.1","Message":"Media is in use."}]}}`,
			": Media is in use. [X.1]"},
		{"only a code", `{"error":{"code":"Base.1.0.GeneralError"}}`, ": Base.1.0.GeneralError"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := parseError("POST", "/x", 400, []byte(tt.body)).Error()
			if !strings.HasSuffix(got, tt.want) {
				t.Errorf("got %q\nwant it to end in %q", got, tt.want)
			}
		})
	}
}

// sushy-tools refuses an image its fetch cannot get with its own message; the client shows it.
func TestSushyToolsFetchRefusalShown(t *testing.T) {
	images := httptest.NewServer(http.NotFoundHandler())
	t.Cleanup(images.Close)
	bmc := startBMC(t, redfishtest.Config{Profile: redfishtest.SushyTools(), FetchDir: t.TempDir()})
	_, err := newClient(t, bmc, nil, nil).Boot(testContext(t), BootRequest{Image: images.URL + "/sno.iso", NoPower: true})
	var refusal *Error
	if !errors.As(err, &refusal) || refusal.StatusCode != http.StatusBadRequest ||
		!strings.Contains(err.Error(), "Cannot download virtual media: got error 404 from the server") {
		t.Errorf("got %v; want the BMC's own reason", err)
	}
}

// No account, a wrong one, and one whose role may only read are three different problems.
func TestAuthRefusalsToldApart(t *testing.T) {
	ctx := testContext(t)
	client := func(bmc *redfishtest.BMC, creds Credentials) *Client {
		addr, _ := ParseAddress(bmc.URL())
		c := New(addr, Options{Credentials: creds, Retry: fastRetry})
		t.Cleanup(func() { c.Close(context.Background()) })
		return c
	}
	sushy := startBMC(t, redfishtest.Config{Profile: redfishtest.SushyTools()})
	_, err := client(sushy, Credentials{}).Status(ctx, "")
	if !errors.Is(err, ErrNoCredentials) || errors.Is(err, ErrWrongCredentials) || !errors.Is(err, ErrUnauthorized) ||
		!strings.Contains(err.Error(), "Authorization required") {
		t.Errorf("no account: %v; want ErrNoCredentials with the BMC's words", err)
	}
	if r := sushy.Requests(); len(r) == 0 || r[len(r)-1].Header.Get("Authorization") != "" {
		t.Errorf("without an account the client still sent an Authorization header")
	}
	_, err = client(sushy, Credentials{Username: testUser, Password: "not-" + testPassword}).Status(ctx, "")
	if !errors.Is(err, ErrWrongCredentials) || errors.Is(err, ErrNoCredentials) ||
		!strings.Contains(err.Error(), "Incorrect username or password") {
		t.Errorf("wrong password: %v; want ErrWrongCredentials with the BMC's words", err)
	}

	idrac := startBMC(t, redfishtest.Config{Profile: redfishtest.IDRAC()})
	_, err = client(idrac, Credentials{Username: testUser, Password: "not-" + testPassword}).Status(ctx, "")
	if !errors.Is(err, ErrWrongCredentials) {
		t.Errorf("wrong password at a session login: %v; want ErrWrongCredentials", err)
	}

	for _, p := range []redfishtest.Profile{redfishtest.IDRAC(), redfishtest.SushyTools()} {
		reader := startBMC(t, redfishtest.Config{Profile: p, ReadOnlyAccount: true})
		_, err = client(reader, Credentials{Username: testUser, Password: testPassword}).Boot(ctx, BootRequest{Image: testImage, NoPower: true})
		if !errors.Is(err, ErrInsufficientPrivilege) || errors.Is(err, ErrUnauthorized) {
			t.Errorf("%s, read-only account: %v; want ErrInsufficientPrivilege", p.Name, err)
		}
	}
}

// A BMC that repeats the password it was sent in its refusal: neither the error nor the
// --verbose trace shows it, in any of its forms.
func TestEchoedCredentialsNeverShown(t *testing.T) {
	const password = `Echo"me\this-pa55`
	forms := []string{password, `Echo\"me\\this-pa55`, base64.StdEncoding.EncodeToString([]byte(testUser + ":" + password))}
	for _, p := range []redfishtest.Profile{redfishtest.SushyTools(), redfishtest.IDRAC()} {
		p.EchoCredentials = true
		bmc := startBMC(t, redfishtest.Config{Profile: p})
		addr, _ := ParseAddress(bmc.URL())
		var trace strings.Builder
		c := New(addr, Options{Credentials: Credentials{Username: testUser, Password: password}, Retry: fastRetry, Trace: &trace})
		_, err := c.Status(testContext(t), "")
		if !errors.Is(err, ErrWrongCredentials) || !strings.Contains(err.Error(), redacted) {
			t.Fatalf("%s: %v; want the refusal with the echo redacted", p.Name, err)
		}
		for _, f := range forms {
			if strings.Contains(err.Error(), f) || strings.Contains(trace.String(), f) {
				t.Errorf("%s: %q shown:\nerror %v\ntrace\n%s", p.Name, f, err, trace.String())
			}
		}
		if !strings.Contains(trace.String(), testUser) {
			t.Errorf("%s: the trace lost the echo altogether:\n%s", p.Name, trace.String())
		}
	}
}

// A BMC that repeats the password in whatever encoding its web stack uses (URL query or path,
// upper or lower case hex, HTML references, JSON escapes): the error, the trace and the
// progress events show it in none of them.
func TestEchoedCredentialsNeverShownEncoded(t *testing.T) {
	const password = `p@ss w/rd"<&é+%\x'😀`
	var shown []string // every form a reader could recognise
	for _, f := range redfishtest.EchoForms {
		shown = append(shown, f.Encode(password))
	}
	shown = append(shown, base64.StdEncoding.EncodeToString([]byte(testUser+":"+password)))
	for _, p := range []redfishtest.Profile{redfishtest.SushyTools(), redfishtest.IDRAC()} {
		for _, form := range redfishtest.EchoForms {
			p.EchoCredentials, p.EchoForm = true, form
			bmc := startBMC(t, redfishtest.Config{Profile: p})
			addr, _ := ParseAddress(bmc.URL())
			var trace, events strings.Builder
			c := New(addr, Options{Credentials: Credentials{Username: testUser, Password: password}, Retry: fastRetry, Trace: &trace,
				Progress: func(e Event) { events.WriteString(e.Message + "\n") }})
			_, err := c.Boot(testContext(t), BootRequest{Image: testImage, NoPower: true})
			if !errors.Is(err, ErrWrongCredentials) || !strings.Contains(err.Error(), redacted) {
				t.Fatalf("%s, %s: %v; want the refusal with the echo redacted", p.Name, form, err)
			}
			for _, text := range []string{err.Error(), trace.String(), events.String()} {
				for _, f := range shown {
					if strings.Contains(text, f) {
						t.Errorf("%s, echoed as %s: %q shown in\n%s", p.Name, form, f, text)
					}
				}
			}
		}
	}
}

// A task monitor that says "Retry-After: 0" is polled no faster than the poll interval.
func TestTaskPollsWaitThePollInterval(t *testing.T) {
	p := redfishtest.SushyTools()
	p.TaskMonitor, p.TaskPolls = true, 5
	bmc := startBMC(t, redfishtest.Config{Profile: p})
	addr, _ := ParseAddress(bmc.URL())
	const poll = 7 * time.Second
	c := New(addr, Options{Credentials: Credentials{Username: testUser, Password: testPassword}, Retry: Backoff{Base: poll, Poll: poll}})
	var waits []time.Duration
	c.sleep = func(ctx context.Context, d time.Duration) error {
		waits = append(waits, d)
		return ctx.Err()
	}
	if _, err := c.Boot(testContext(t), BootRequest{Image: testImage, NoPower: true}); err != nil {
		t.Fatal(err)
	}
	monitorPolls := 0
	for _, r := range bmc.Requests() {
		if strings.Contains(r.Path, "/TaskMonitors/") {
			monitorPolls++
		}
	}
	if monitorPolls == 0 {
		t.Fatalf("the insert ran without a task monitor")
	}
	if len(waits) < p.TaskPolls {
		t.Errorf("%d waits for %d polls answered 202", len(waits), p.TaskPolls)
	}
	for _, w := range waits {
		if w < poll {
			t.Errorf("waited %s between polls, less than the poll interval %s", w, poll)
		}
	}
}

// Credentials over plain http get one warning; none without credentials or over https.
func TestPlainHTTPCredentialsWarning(t *testing.T) {
	warnings := func(bmc *redfishtest.BMC, creds Credentials) string {
		addr, _ := ParseAddress(bmc.URL())
		var events eventLog
		c := New(addr, Options{Credentials: creds, Retry: fastRetry, Progress: events.add, TLS: insecureTLS()})
		if _, err := c.Status(testContext(t), ""); err != nil && creds != (Credentials{}) {
			t.Fatal(err)
		}
		var out []string
		for _, e := range events.events {
			if e.Step == StepWarning {
				out = append(out, e.Message)
			}
		}
		return strings.Join(out, "\n")
	}
	account := Credentials{Username: testUser, Password: testPassword}
	plain := startBMC(t, redfishtest.Config{Profile: redfishtest.SushyTools()})
	if w := warnings(plain, account); strings.Count(w, "unencrypted") != 1 || strings.Contains(w, testPassword) {
		t.Errorf("plain http with an account: warnings %q; want one about the unencrypted account", w)
	}
	if w := warnings(plain, Credentials{}); w != "" {
		t.Errorf("plain http without an account: warnings %q", w)
	}
	if w := warnings(startBMC(t, redfishtest.Config{Profile: redfishtest.SushyTools(), TLS: true}), account); w != "" {
		t.Errorf("https: warnings %q", w)
	}
}

// https:// to a BMC that speaks plain HTTP is told as such, at once.
func TestHTTPSOnPlainHTTPBMC(t *testing.T) {
	bmc := startBMC(t, redfishtest.Config{Profile: redfishtest.SushyTools()})
	c := clientOf(t, strings.Replace(bmc.URL(), "http://", "https://", 1))
	_, err := c.Status(testContext(t), "")
	if !errors.Is(err, ErrPlainHTTP) {
		t.Errorf("got %v; want ErrPlainHTTP", err)
	}
	if n := len(bmc.Requests()); n != 0 {
		t.Errorf("the fake answered %d requests", n)
	}
}

// Systems named by path, Id, Name, UUID, and the name path that sushy-tools redirects.
func TestSystemNames(t *testing.T) {
	p := redfishtest.SushyTools()
	p.OtherSystems = []string{"other"}
	bmc := startBMC(t, redfishtest.Config{Profile: p})
	c := newClient(t, bmc, nil, nil)
	uuidPath := "/redfish/v1/Systems/" + p.SystemUUID
	for _, name := range []string{uuidPath, p.SystemID, "fake", strings.ToUpper(p.SystemUUID), "/redfish/v1/Systems/fake"} {
		st, err := c.Status(testContext(t), name)
		if err != nil || st.System != uuidPath {
			t.Errorf("system %q: %+v, %v; want %s", name, st, err, uuidPath)
		}
	}
	if got := len(requestsTo(bmc, "GET", "/Systems/fake")); got != 1 {
		t.Errorf("%d GETs of the alias path, want the one that was redirected", got)
	}
	_, err := c.Status(testContext(t), "nonesuch")
	var nf *NotFoundError
	if !errors.As(err, &nf) || !strings.Contains(err.Error(), uuidPath) {
		t.Errorf("unknown system: %v; want a NotFoundError listing the systems", err)
	}

	// The address may name the System by its alias; the reset follows the redirect too.
	addr, _ := ParseAddress(bmc.URL() + "/redfish/v1/Systems/fake")
	byAlias := New(addr, Options{Credentials: Credentials{Username: testUser, Password: testPassword}, Retry: fastRetry})
	res, err := byAlias.Boot(testContext(t), BootRequest{Image: testImage, Wait: true})
	if err != nil || res.System != uuidPath || len(bmc.Boots()) != 1 {
		t.Errorf("boot through the alias address: %+v, %v, %d boots", res, err, len(bmc.Boots()))
	}
}

// A redirect to another host, or one that is not a 307/308, is not followed: the
// credentials never leave the BMC.
func TestRedirectsElsewhereNotFollowed(t *testing.T) {
	var elsewhere atomic.Int32
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		elsewhere.Add(1)
		w.Write([]byte(`{"Systems":{"@odata.id":"/redfish/v1/Systems"}}`))
	}))
	t.Cleanup(other.Close)
	for _, tt := range []struct {
		name   string
		status int
		to     func(r *http.Request) string
	}{
		{"307 to another port", http.StatusTemporaryRedirect, func(r *http.Request) string { return other.URL + r.URL.Path }},
		{"308 to another scheme", http.StatusPermanentRedirect, func(r *http.Request) string { return "https://" + r.Host + r.URL.Path }},
		{"302 on the same BMC", http.StatusFound, func(r *http.Request) string { return "/elsewhere" + r.URL.Path }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			bmc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				http.Redirect(w, r, tt.to(r), tt.status)
			}))
			t.Cleanup(bmc.Close)
			addr, _ := ParseAddress(bmc.URL)
			c := New(addr, Options{Credentials: Credentials{Username: testUser, Password: testPassword}, Retry: fastRetry})
			_, err := c.Status(testContext(t), "")
			var refusal *Error
			if !errors.As(err, &refusal) || refusal.StatusCode != tt.status || !strings.Contains(err.Error(), "not followed") {
				t.Errorf("got %v; want the redirect refused", err)
			}
		})
	}
	if n := elsewhere.Load(); n != 0 {
		t.Errorf("the other host got %d requests", n)
	}
}

// --slot naming a slot that takes no CD, while the override targets the CD, is refused
// before anything changes.
func TestSlotMustTakeCD(t *testing.T) {
	bmc := startBMC(t, redfishtest.Config{Profile: redfishtest.SushyTools()})
	_, err := newClient(t, bmc, nil, nil).Boot(testContext(t), BootRequest{Image: testImage, Slot: "Floppy"})
	var mismatch *SlotTypeError
	if !errors.As(err, &mismatch) || mismatch.Slot != "Floppy" || !strings.Contains(err.Error(), "the CD/DVD slots are Cd") {
		t.Errorf("got %v; want a SlotTypeError naming the CD slot", err)
	}
	for _, r := range bmc.Requests() {
		if r.Method != http.MethodGet {
			t.Errorf("sent %s %s", r.Method, r.Path)
		}
	}
}

func insecureTLS() *tls.Config { return &tls.Config{InsecureSkipVerify: true} }

// The override is read back: a BMC that skips it (200 with an annotation) is reported, one
// that keeps it Once is not.
func TestBootOverrideReadBack(t *testing.T) {
	for _, skips := range []bool{false, true} {
		p := redfishtest.IDRAC()
		p.SkipsBootOverride = skips
		bmc := startBMC(t, redfishtest.Config{Profile: p})
		var events eventLog
		res, err := newClient(t, bmc, &events, nil).Boot(testContext(t), BootRequest{Image: testImage, NoPower: true})
		if err != nil {
			t.Fatal(err)
		}
		warned := strings.Contains(events.text(), "boot-persists: the BMC reports the boot override None Disabled after it was set to Cd once: it ignored it")
		if res.BootOverrideNotOnce != skips || warned != skips || res.BootOverride == nil {
			t.Errorf("skips %v: result %+v, events\n%s", skips, res, events.text())
		}
		if !skips && (res.BootOverride.Target != "Cd" || res.BootOverride.Enabled != "Once") {
			t.Errorf("override read back as %+v, want Cd Once", res.BootOverride)
		}
	}
}
