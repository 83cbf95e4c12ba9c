package redfishtest

// Slot describes one virtual media slot of a generated tree.
type Slot struct {
	ID         string
	MediaTypes []string
	// NoActions leaves out InsertMedia/EjectMedia: the slot is changed by PATCH.
	NoActions bool
	// RefuseInsert is the status an insert gets (400 or 405 for slots that only the
	// vendor's own tools fill); 0 accepts.
	RefuseInsert int
	// Image is inserted from the start.
	Image string
}

// Profile is a BMC's shape and behaviour as data: the generated tree and the deviations
// from the DMTF schemas that real BMCs show (../shared/spec/redfish-virtual-media.md).
type Profile struct {
	Name     string
	SystemID string
	// SystemName and SystemUUID are the System's Name and UUID ("" leaves them out).
	SystemName, SystemUUID string
	// AliasRedirects answers a request for /Systems/NAME[/...] with 307 to the same path
	// under the System's Id (sushy-tools).
	AliasRedirects bool
	// OtherSystems are more Systems the BMC lists (blade chassis, multi-node enclosures):
	// powered off, with no media of their own.
	OtherSystems []string
	ManagerID    string
	// MediaUnderManager puts VirtualMedia under the Manager (the older placement).
	MediaUnderManager bool
	// ManagerLinksSystemMedia gives the Manager a VirtualMedia link to the System's
	// collection (sushy-tools since 2023).
	ManagerLinksSystemMedia bool
	// SlotEmptyAsStrings shows an empty slot as Image "", ImageName "" and ConnectedVia
	// "URI", with only Inserted false telling it is empty (sushy-tools).
	SlotEmptyAsStrings bool
	Slots              []Slot
	// TrailingSlash ends the media actions' targets in "/" (iLO).
	TrailingSlash bool
	BootTargets   []string
	ResetTypes    []string
	// ResetActionInfo lists the reset types in an ActionInfo resource instead.
	ResetActionInfo bool
	// SettingsObject keeps pending Boot values in a settings resource (iDRAC10): a PATCH
	// of the System's Boot is refused.
	SettingsObject bool
	// NoSessions has no SessionService: Basic authentication only.
	NoSessions bool
	// AllowHeader sends Allow on every GET.
	AllowHeader bool

	// RejectInsertFields are InsertMedia properties the BMC refuses to be given.
	RejectInsertFields []string
	// RequireInsertFields are InsertMedia properties the BMC refuses to do without; a 400
	// names the first one missing.
	RequireInsertFields []string
	// EjectEmptyBodyStatus answers an EjectMedia without a body (415 iLO, 400 iDRAC).
	EjectEmptyBodyStatus int
	// RejectBootMode refuses a Boot PATCH that carries BootSourceOverrideMode (HPE).
	RejectBootMode bool
	// SkipsBootOverride answers a Boot PATCH with 200 and a PropertyNotWritable annotation
	// and keeps the old values: DSP0266 lets a service accept a PATCH and skip properties it
	// cannot write, saying so only in the 200's @Message.ExtendedInfo.
	SkipsBootOverride bool
	// ContinuousOverrides keeps every boot override Continuous whatever Enabled the client
	// sends, so it is never spent by a boot (sushy-tools).
	ContinuousOverrides bool
	// GeneralErrorBodies answers every refusal with code Base.1.0.GeneralError, the reason
	// only in error.message and an extended entry with a MessageId and no Message
	// (sushy-tools).
	GeneralErrorBodies bool
	// BasicAuthChallenge answers 401 with "Authorization required" or "Incorrect username
	// or password" and a WWW-Authenticate challenge (sushy-tools).
	BasicAuthChallenge bool
	// EchoCredentials repeats the account it was sent in its 401 answers, as a careless
	// BMC might: clients must not show them.
	EchoCredentials bool
	// EchoForm is how it writes the password it echoes.
	EchoForm EchoForm
	// RequireTargetWithEnabled refuses a Boot PATCH that has one of Target and Enabled
	// without the other (Supermicro, AMI).
	RequireTargetWithEnabled bool
	// KeepImageAfterEject leaves Image and ImageName after an eject, with ConnectedVia
	// NotConnected and Inserted false (Supermicro).
	KeepImageAfterEject bool
	// StaleReads is how many GETs of a slot after a change still show the old state
	// (iDRAC).
	StaleReads int
	// BusyMessageID refuses the first action or PATCH with this transient MessageId (Dell
	// SYS518, iLO UnableToModifyDuringSystemPOST).
	BusyMessageID string
	// ConflictsAfterPowerOff is how many actions and PATCHes get 409 after a power-off
	// (iDRAC10).
	ConflictsAfterPowerOff int
	// SuccessErrorBodies answers successful actions with 200 and an error object whose
	// MessageId is Base.x.Success (iLO).
	SuccessErrorBodies bool
	// RefuseHTTPSImages refuses https:// image URLs (XCC1).
	RefuseHTTPSImages bool
	// RequireISOName refuses image URLs that do not end in .iso or carry a query (Dell).
	RequireISOName bool
	// StrictETags refuses a PATCH whose If-Match is weak or stale (412).
	StrictETags bool
	// WeakETags hands out W/"..." ETags.
	WeakETags bool
	// DriftingETags changes the System after every read (a live sensor reading in it), so
	// the ETag a client read is already stale when it sends If-Match.
	DriftingETags bool
	// TaskMonitor answers actions with 202 and a task monitor polled TaskPolls times.
	TaskMonitor bool
	TaskPolls   int
	// SessionExpiresAfter drops a session after this many authenticated requests.
	SessionExpiresAfter int
	// FetchChunk makes the virtual CD read the image in Range requests of this size
	// (iDRAC); 0 fetches it in one GET (sushy-tools).
	FetchChunk int64
}

var standardResetTypes = []string{"On", "ForceOff", "GracefulShutdown", "GracefulRestart", "ForceRestart", "Nmi", "PushPowerButton"}

var dmtfBootTargets = []string{"None", "Pxe", "Floppy", "Cd", "Usb", "Hdd", "BiosSetup", "UefiTarget", "UefiHttp"}

// IDRAC behaves like a Dell iDRAC with its media under the Manager (older firmware): SYS518
// while busy, stale slot reads after a change, 400 to an eject without a body, .iso names
// only (and, here, no query string), and the virtual CD reading the image in ranges.
func IDRAC() Profile {
	return Profile{
		Name: "idrac", SystemID: "System.Embedded.1", SystemName: "System", SystemUUID: "4c4c4544-0051-3510-8047-c4c04f4e4d32",
		ManagerID: "iDRAC.Embedded.1", MediaUnderManager: true,
		Slots: []Slot{
			{ID: "RemovableDisk", MediaTypes: []string{"USBStick"}},
			{ID: "CD", MediaTypes: []string{"CD", "DVD"}},
		},
		BootTargets: dmtfBootTargets, ResetTypes: standardResetTypes, AllowHeader: true,
		EjectEmptyBodyStatus: 400, StaleReads: 2, BusyMessageID: "IDRAC.2.9.SYS518", RequireISOName: true,
		FetchChunk: 1 << 20,
	}
}

// IDRAC10 is the iDRAC10 variant: media under the System, Boot values through a settings
// object, and 409 for a while after a power-off.
func IDRAC10() Profile {
	p := IDRAC()
	p.Name, p.MediaUnderManager = "idrac10", false
	p.SettingsObject, p.ConflictsAfterPowerOff = true, 2
	return p
}

// ILO behaves like an HPE iLO 5: the CD is slot 2 (slot 1 is the floppy/USB), action
// targets end in "/", 415 to an eject without a body, Mode in a Boot PATCH refused,
// successes answered with a Base.Success error object, and a refusal during POST.
func ILO() Profile {
	return Profile{
		Name: "ilo", SystemID: "1", ManagerID: "1", MediaUnderManager: true,
		Slots: []Slot{
			{ID: "1", MediaTypes: []string{"Floppy", "USBStick"}},
			{ID: "2", MediaTypes: []string{"CD", "DVD"}},
		},
		TrailingSlash: true, BootTargets: dmtfBootTargets, ResetTypes: standardResetTypes, AllowHeader: true,
		EjectEmptyBodyStatus: 415, RejectBootMode: true, SuccessErrorBodies: true,
		BusyMessageID: "iLO.2.15.UnableToModifyDuringSystemPOST",
	}
}

// Supermicro behaves like an X11/X12 BMC: Inserted and WriteProtected refused in an insert,
// UsbCd instead of Cd, Target and Enabled only together, and ImageName kept after an eject.
// It also requires TransferProtocolType, the first rung of the insert ladder.
func Supermicro() Profile {
	return Profile{
		Name: "supermicro", SystemID: "1", ManagerID: "1", MediaUnderManager: true,
		Slots:              []Slot{{ID: "CD1", MediaTypes: []string{"CD", "DVD"}}, {ID: "USB1", MediaTypes: []string{"USBStick"}}},
		BootTargets:        []string{"None", "Pxe", "Hdd", "UsbCd", "UsbHdd", "BiosSetup", "UefiShell"},
		ResetTypes:         standardResetTypes,
		RejectInsertFields: []string{"Inserted", "WriteProtected"}, RequireInsertFields: []string{"TransferProtocolType"},
		RequireTargetWithEnabled: true, KeepImageAfterEject: true,
	}
}

// LenovoXCC behaves like a Lenovo XClarity Controller: RDOC slots that refuse remote images
// listed before the usable one, and no HTTPS image URLs (XCC1). It also insists on every
// parameter of the insert ladder, as some BMCs do, so that all its rungs are exercised.
func LenovoXCC() Profile {
	return Profile{
		Name: "xcc", SystemID: "1", ManagerID: "1", MediaUnderManager: true,
		Slots: []Slot{
			{ID: "RDOC1", MediaTypes: []string{"CD", "DVD"}, RefuseInsert: 405},
			{ID: "RDOC2", MediaTypes: []string{"CD", "DVD"}, RefuseInsert: 400},
			{ID: "EXT1", MediaTypes: []string{"CD", "DVD", "USBStick"}},
		},
		BootTargets: dmtfBootTargets, ResetTypes: standardResetTypes, ResetActionInfo: true,
		RequireInsertFields: []string{"TransferProtocolType", "TransferMethod", "UserName", "Password"},
		RefuseHTTPSImages:   true,
	}
}

// SushyTools behaves like OpenStack's sushy-tools emulator (2026, the fake and libvirt
// drivers): Systems listed by UUID and named (Name) after the VM, a request naming one by
// Name redirected with 307 to its UUID path (emulator/main.py all_exception_handler), the
// virtual media under the System with the Manager linking there (controllers/
// virtual_media.py since December 2023, main.py manager_resource), empty slots shown with
// empty strings (templates/virtual_media.json), boot overrides always Continuous
// (main.py system_resource ignores BootSourceOverrideEnabled; templates/system.json),
// targets Pxe, Cd, Hdd and UefiHttp, no SessionService (templates/root.json), Basic
// authentication refusing with "Authorization required" or "Incorrect username or
// password" (emulator/auth_basic.py), every refusal a Base.1.0.GeneralError whose reason is
// only in error.message (templates/error.json), and the image fetched in one GET, a failed
// fetch refused as "Cannot download virtual media: got error N from the server"
// (resources/vmedia.py _get_image).
func SushyTools() Profile {
	return Profile{
		Name: "sushy-tools", SystemID: "8d4a5f2e-3c71-4b1a-9e0f-2a6c5d8b7e10", SystemName: "fake",
		SystemUUID: "8d4a5f2e-3c71-4b1a-9e0f-2a6c5d8b7e10", AliasRedirects: true,
		ManagerID: "BMC", ManagerLinksSystemMedia: true, SlotEmptyAsStrings: true,
		Slots:       []Slot{{ID: "Cd", MediaTypes: []string{"CD", "DVD"}}, {ID: "Floppy", MediaTypes: []string{"Floppy", "USBStick"}}},
		BootTargets: []string{"Pxe", "Cd", "Hdd", "UefiHttp"},
		ResetTypes:  []string{"On", "ForceOff", "GracefulShutdown", "GracefulRestart", "ForceRestart", "Nmi", "ForceOn"},
		NoSessions:  true, ContinuousOverrides: true, GeneralErrorBodies: true, BasicAuthChallenge: true,
	}
}

// Profiles are the vendor profiles, for tests that run against each.
func Profiles() []Profile {
	return []Profile{IDRAC(), IDRAC10(), ILO(), Supermicro(), LenovoXCC(), SushyTools()}
}
