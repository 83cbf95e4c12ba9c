package redfish

// Step names what an Event is about.
type Step string

// The steps of Boot, Eject and Status, in the order Boot takes them.
const (
	StepAuth    Step = "auth"
	StepSystem  Step = "system"
	StepSlot    Step = "slot"
	StepEject   Step = "eject"
	StepInsert  Step = "insert"
	StepBoot    Step = "boot-override"
	StepPower   Step = "power"
	StepTask    Step = "task"
	StepWarning Step = "warning"
	// StepBootPersists warns that the BMC did not keep the override to one boot: the
	// System boots the image again at every start until the media is ejected.
	StepBootPersists Step = "boot-persists"
)

// Event is one step taken, for a one-line report.
type Event struct {
	Step    Step
	Message string
}
