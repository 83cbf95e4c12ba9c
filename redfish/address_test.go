package redfish

import (
	"errors"
	"strings"
	"testing"
)

func TestParseAddress(t *testing.T) {
	for _, tt := range []struct{ in, endpoint, system string }{
		{"https://bmc.example", "https://bmc.example", ""},
		{"https://10.0.0.5:8443/", "https://10.0.0.5:8443", ""},
		{"https://bmc/redfish/v1", "https://bmc", ""},
		{"https://bmc/redfish/v1/Systems/437XR1138R2", "https://bmc", "/redfish/v1/Systems/437XR1138R2"},
		{"https://bmc/redfish/v1/Systems/1/", "https://bmc", "/redfish/v1/Systems/1"},
		{"http://127.0.0.1:8000", "http://127.0.0.1:8000", ""},
		{"redfish-virtualmedia://bmc/redfish/v1/Systems/1", "https://bmc", "/redfish/v1/Systems/1"},
		{"redfish-virtualmedia+http://bmc:8000/redfish/v1/Systems/abc", "http://bmc:8000", "/redfish/v1/Systems/abc"},
		{"idrac-virtualmedia://idrac.example/redfish/v1/Systems/System.Embedded.1", "https://idrac.example", "/redfish/v1/Systems/System.Embedded.1"},
		{"idrac-virtualmedia://idrac.example", "https://idrac.example", "/redfish/v1/Systems/System.Embedded.1"},
		{"  https://[2001:db8::1]/  ", "https://[2001:db8::1]", ""},
	} {
		a, err := ParseAddress(tt.in)
		if err != nil || a.Endpoint != tt.endpoint || a.SystemPath != tt.system {
			t.Errorf("ParseAddress(%q) = %+v, %v; want %s %q", tt.in, a, err, tt.endpoint, tt.system)
		}
	}
}

func TestParseAddressRefuses(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"", "empty"},
		{"bmc.example", "no scheme; write https://bmc.example"},
		{"ftp://bmc", `scheme "ftp"`},
		{"ipmi://bmc", `scheme "ipmi"`},
		{"redfish-virtualmedia+ftp://bmc", "scheme"},
		{"https://root:calvin@bmc", "credentials do not belong in the address"},
		{"https://bmc/redfish/v1/Managers/1", "neither empty nor /redfish/v1/Systems/ID"},
		{"https://bmc/redfish/v1/Systems/1/VirtualMedia", "neither empty"},
		{"https://bmc/?x=1", "query"},
		{"https://:443", "no host"},
	} {
		_, err := ParseAddress(tt.in)
		if !errors.Is(err, ErrBadAddress) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("ParseAddress(%q): %v; want ErrBadAddress mentioning %q", tt.in, err, tt.want)
		}
	}
	if _, err := ParseAddress("https://root:calvin@bmc"); strings.Contains(err.Error(), "calvin") {
		t.Errorf("the error shows the password: %v", err)
	}
}

func TestImageURLWarnings(t *testing.T) {
	for _, tt := range []struct {
		url   string
		wants []string
	}{
		{"http://10.0.0.1:8080/sno.iso", nil},
		{"http://10.0.0.1:8080/sno.iso?token=abc", []string{"query string"}},
		{"http://10.0.0.1:8080/sno", []string{"does not end in .iso"}},
		{"https://10.0.0.1/sno.iso", []string{"HTTPS"}},
		{"http://10.0.0.1/" + strings.Repeat("a", 200) + ".iso", []string{"long"}},
	} {
		got, err := ImageURLWarnings(tt.url)
		if err != nil || len(got) != len(tt.wants) {
			t.Errorf("ImageURLWarnings(%q) = %q, %v; want %d warnings", tt.url, got, err, len(tt.wants))
			continue
		}
		for i, w := range tt.wants {
			if !strings.Contains(got[i], w) {
				t.Errorf("ImageURLWarnings(%q)[%d] = %q, want %q", tt.url, i, got[i], w)
			}
		}
	}
	for _, bad := range []string{"nfs://server/sno.iso", "/sno.iso", "http:///sno.iso", "http://bad host/x.iso"} {
		if _, err := ImageURLWarnings(bad); err == nil {
			t.Errorf("ImageURLWarnings(%q) accepted it", bad)
		}
	}
}
