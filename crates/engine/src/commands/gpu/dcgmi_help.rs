//! The help text `dcgmi SUBSYSTEM -h` prints, as DCGM 3.3.9 renders it: its
//! TCLAP argument definitions laid out by its own formatter (`NvcmTCLAP.h`
//! `DCGMOutput::usage`: description wrapped to 80 columns, one usage line per
//! argument group, flags in a 17/10 column layout with continuation lines at
//! column 31, trailing spaces where a description breaks a line). Kept line
//! by line so that those spaces survive; the rows every subsystem shares
//! (`--host`, `--ignore_rest`) once.

/// The help of `subsystem`, None for one without its own.
pub fn help(subsystem: &str) -> Option<String> {
    let parts = match subsystem {
        "discovery" => DISCOVERY,
        "diag" => DIAG,
        "group" => GROUP,
        "health" => HEALTH,
        "nvlink" => NVLINK,
        _ => return None,
    };
    Some(parts.iter().flat_map(|part| part.iter()).map(|line| format!("{line}\n")).collect())
}

/// `--host`, as every subsystem lists it.
const HOST: &[&str] = &[
    "      --host       IP/FQDN    Connects to specified IP or fully-qualified domain",
    "                               name. To connect to a host engine that was",
    "                               started with -d (unix socket), prefix the unix",
    "                               socket filename with 'unix://'. [default =",
    "                               localhost]",
];

/// `--ignore_rest`, last of every subsystem's flags.
const IGNORE_REST: &[&str] =
    &["  --  --ignore_rest           Ignores the rest of the labeled arguments", "                               following this flag."];

const DISCOVERY_0: &[&str] = &[
    "",
    " discovery -- Used to discover and identify GPUs and their attributes.",
    "",
    "Usage: dcgmi discovery",
    "   dcgmi discovery --host <IP/FQDN> -l ",
    "   dcgmi discovery --host <IP/FQDN> -i <flags> --cpuid <cpuId> -g <groupId>",
    "        -v ",
    "   dcgmi discovery -c ",
    "",
    "Flags:",
    "  -g  --group      groupId    The group ID to query.",
];

const DISCOVERY_2: &[&str] = &[
    "  -l  --list                  List all GPUs and NVIDIA CPUs discovered on the",
    "                               host.",
    "  -i  --info       flags      Specify which information to return. [default =",
    "                               atp]  ",
    "                               a - device info ",
    "                               p - power limits ",
    "                               t - thermal limits ",
    "                               c - clocks",
    "  -c  --compute-hierarchy           List all of the gpu instances and compute",
    "                               instances",
    "  -h  --help                  Displays usage information and exits.",
    "      --gpuid      gpuId      The GPU ID to query.",
    "      --cpuid      cpuId      The CPU ID to query.",
    "  -v  --verbose               Display policy information per GPU.",
];

const DISCOVERY_4: &[&str] = &["", " ", " NVIDIA Datacenter GPU Management Interface", ""];

const DISCOVERY: &[&[&str]] = &[DISCOVERY_0, HOST, DISCOVERY_2, IGNORE_REST, DISCOVERY_4];

const DIAG_0: &[&str] = &[
    "",
    " diag -- Used to run diagnostics on the system.",
    "",
    "Usage: dcgmi diag",
    "   dcgmi diag --host <IP/FQDN> -g <groupId> -r <diag> -p",
    "        <test_name.variable_name=variable_value;test_name.variable_name2=va",
    "        riable_value> ... -c </full/path/to/config/file> -f <fakeGpuList>",
    "        -i <gpuList> -n <expectedNumEntities> -v --statsonfail",
    "        --debugLogFile <debug file> --statspath <plugin statistics path> -j",
    "        --throttle-mask <> --fail-early --check-interval <failure check",
    "        interval> --iterations <iterations> -t <timeout> ",
    "",
    "Flags:",
    "  -g  --group      groupId    The group ID to query.",
];

const DIAG_2: &[&str] = &[
    "  -h  --help                  Displays usage information and exits.",
    "  -r  --run        diag       Run a diagnostic. (Note: higher numbered tests",
    "                               include all beneath.)   ",
    "                               1 - Quick (System Validation ~ seconds)  ",
    "                               2 - Medium (Extended System Validation ~ 2",
    "                               minutes)  ",
    "                               3 - Long (System HW Diagnostics ~ 15 minutes)  ",
    "                               4 - Extended (Longer-running System HW",
    "                               Diagnostics)  ",
    "                               Specific tests to run may be specified by name,",
    "                               and multiple tests may be specified as a comma",
    "                               separated list. For example, the command: ",
    "                                ",
    "                               dcgmi diag -r \"sm stress,diagnostic\"  ",
    "                                ",
    "                               would run the SM Stress and Diagnostic tests",
    "                               together.",
    "  -p  --parameters",
    "                               test_name.variable_name=variable_value;test_name.",
    "                               variable_name2=variable_value Test parameters to",
    "                               set for this run.",
    "  -c  --configfile /full/path/to/config/file Path to the configuration file.",
    "  -f  --fakeGpuListfakeGpuList A comma-separated list of the fake gpus on which",
    "                               the diagnostic should run. For internal/testing",
    "                               use only. Cannot be used with -g/-i.",
    "  -i  --gpuList    gpuList    A comma-separated list of the gpus on which the",
    "                               diagnostic should run. Cannot be used with -g.",
    "  -n  --expectedNumEntitiesexpectedNumEntities Expected number of active GPUs to",
    "                               run diagnostic. The diag will fail if the number",
    "                               of active GPUs does not match this value.        ",
    "                               Format: gpu:N, where N is the number of expected",
    "                               GPUs (not GPU id). Cannot be used with",
    "                               -f/--gpuList.",
    "  -v  --verbose               Show information and warnings for each test.",
    "      --statsonfail           Only output the statistics files if there was a",
    "                               failure",
    "      --debugLogFiledebug file Encrypted log file for debug information. If a   ",
    "                               debug level has been specified then \"nvvs.log\" is",
    "                               the default log file.",
    "      --statspath  plugin statistics path Write the plugin statistics to the",
    "                               given path             rather than the current",
    "                               directory",
    "  -d  --debugLevel debug level Debug level (One of NONE, FATAL, ERROR, WARN,",
    "                               INFO, DEBUG, VERB). Default: DEBUG. The logfile  ",
    "                               can be specified by the --debugLogFile",
    "                               parameter.",
    "  -j  --json                  Print the output in a json format",
    "      --train                 Run the diagnostic iteratively and generate a",
    "                               configuration file of golden values based on",
    "                               those results.",
    "      --throttle-mask           Specify which throttling reasons should be",
    "                               ignored. You can provide a comma separated list",
    "                               of reasons. For example, specifying 'HW_SLOWDOWN",
    "                               ,SW_THERMAL' would ignore the HW_SLOWDOWN and",
    "                               SW_THERMAL throttling reasons. Alternatively, you",
    "                               can specify the integer value of the ignore",
    "                               bitmask. For the bitmask, multiple reasons may be",
    "                               specified by the sum of their bit masks. For",
    "                               example, specifying '40' would ignore the",
    "                               HW_SLOWDOWN and SW_THERMAL throttling",
    "                               reasons. ",
    "                                ",
    "                               Valid throttling reasons and their corresponding",
    "                               bitmasks (given in parentheses) are: ",
    "                               HW_SLOWDOWN (8) ",
    "                               SW_THERMAL (32) ",
    "                               HW_THERMAL (64) ",
    "                               HW_POWER_BRAKE (128)",
    "      --fail-early            Enable early failure checks for the Targeted Power",
    "                               , Targeted Stress, SM Stress, and Diagnostic",
    "                               tests. When enabled, these tests check for a",
    "                               failure once every 5 seconds (can be modified by",
    "                               the --check-interval parameter) while the test is",
    "                               running instead of a single check performed after",
    "                               the test is complete. Disabled by default.",
    "      --check-intervalfailure check interval Specify the interval (in seconds)",
    "                               at which the early failure checks should occur",
    "                               for the Targeted Power, Targeted Stress, SM",
    "                               Stress, and Diagnostic tests when early failure",
    "                               checks are enabled. Default is once every 5",
    "                               seconds. Interval must be between 1 and 300",
    "      --iterations iterations Specify a number of iterations of the diagnostic",
    "                               to run consecutively. (Must be greater than 0.)",
    "  -t  --timeout    timeout    Specify a timeout in seconds for the execution of",
    "                               the diagnostic. (Default is unlimited).",
];

const DIAG_4: &[&str] = &[
    "",
    " Verbose diagnostic output is currently limited on client, for full diagnostic",
    " and validation logs please check your server. ",
    "",
    " NVIDIA Datacenter GPU Management Interface",
    "",
];

const DIAG: &[&[&str]] = &[DIAG_0, HOST, DIAG_2, IGNORE_REST, DIAG_4];

const GROUP_0: &[&str] = &[
    "",
    " group -- Used to create and maintain groups of GPUs. Groups of GPUs can then be",
    " uniformly controlled through other DCGMI subsystems.",
    "",
    "Usage: dcgmi group",
    "   dcgmi group --host <IP/FQDN> -l -j ",
    "   dcgmi group --host <IP/FQDN> -c <groupName> --default",
    "        --defaultnvswitches ",
    "   dcgmi group --host <IP/FQDN> -c <groupName> -a <entityId> ",
    "   dcgmi group --host <IP/FQDN> -d <groupId> ",
    "   dcgmi group --host <IP/FQDN> -g <groupId> -i -j ",
    "   dcgmi group --host <IP/FQDN> -g <groupId> -a <entityId> ",
    "   dcgmi group --host <IP/FQDN> -g <groupId> -r <entityId> ",
    "",
    "Flags:",
];

const GROUP_2: &[&str] = &[
    "  -l  --list                  List the groups that currently exist for a host.",
    "  -d  --delete     groupId    Delete a group on the remote host.",
    "  -c  --create     groupName  Create a group on the remote host.",
    "  -h  --help                  Displays usage information and exits.",
    "  -i  --info                  Display the information for the specified group",
    "                               ID.",
    "  -r  --remove     entityId   Remove device(s) from group. (csv gpuIds, or",
    "                               entityIds like gpu:0,nvswitch:994)",
    "  -a  --add        entityId   Add device(s) to group. (csv gpuIds or entityIds",
    "                               simlar to gpu:0, instance:1, compute_instance:2,",
    "                               nvswitch:994, cpu:3, core:4)",
    "      --default               Adds all available GPUs to the group being",
    "                               created.",
    "      --defaultnvswitches           Adds all available NvSwitches to the group",
    "                               being created.",
    "  -j  --json                  Print the output in a json format",
];

const GROUP_4: &[&str] = &["", " ", " NVIDIA Datacenter GPU Management Interface", ""];

const GROUP: &[&[&str]] = &[GROUP_0, HOST, GROUP_2, IGNORE_REST, GROUP_4];

const HEALTH_0: &[&str] = &[
    "",
    " health --  Used to manage the health watches of a group. The health of the GPUs",
    " in a group can then be monitored during a process.",
    "",
    "Usage: dcgmi health",
    "   dcgmi health --host <IP/FQDN> -g <groupId> -c -j ",
    "   dcgmi health --host <IP/FQDN> -g <groupId> -f -j ",
    "   dcgmi health --host <IP/FQDN> -g <groupId> -s <flags> -j -m <seconds> -u",
    "        <seconds> ",
    "",
    "Flags:",
    "  -g  --group      groupId    The GPU group to query on the specified host.",
];

const HEALTH_2: &[&str] = &[
    "  -f  --fetch                 Fetch the current watch status.",
    "  -s  --set        flags      Set the watches to be monitored. [default = pm] ",
    "                               a - all watches ",
    "                               p - PCIe watches (*) ",
    "                               m - memory watches (*) ",
    "                               i - infoROM watches ",
    "                               t - thermal and power watches (*) ",
    "                               n - NVLink watches (*) ",
    "                               (*) watch requires 60 sec before first query",
    "      --clear                 Disable all watches being monitored.",
    "  -c  --check                 Check to see if any errors or warnings have",
    "                               occurred in the currently monitored watches.",
    "  -h  --help                  Displays usage information and exits.",
    "  -j  --json                  Print the output in a json format",
    "  -m  --max-keep-ageseconds    How long DCGM should cache the samples in",
    "                               seconds.",
    "  -u  --update-intervalseconds    How often DCGM should retrieve health from the",
    "                               driver in seconds.",
];

const HEALTH_4: &[&str] = &["", " ", " NVIDIA Datacenter GPU Management Interface", ""];

const HEALTH: &[&[&str]] = &[HEALTH_0, HOST, HEALTH_2, IGNORE_REST, HEALTH_4];

const NVLINK_0: &[&str] = &[
    "",
    " nvlink -- Used to get NvLink link status or error counts for GPUs and",
    " NvSwitches in the system ",
    "  ",
    " NVLINK Error description  ",
    " ========================= ",
    " CRC FLIT Error => Data link receive flow control digit CRC error. ",
    " CRC Data Error => Data link receive data CRC error. ",
    " Replay Error   => Data link transmit replay error. ",
    " Recovery Error => Data link transmit recovery error.",
    "",
    "Usage: dcgmi nvlink",
    "   dcgmi nvlink --host <IP/FQDN> -g <gpuId> -e -j ",
    "   dcgmi nvlink --host <IP/FQDN> -s ",
    "",
    "Flags:",
];

const NVLINK_2: &[&str] = &[
    "  -e  --errors                Print NvLink errors for a given gpuId (-g).",
    "  -s  --link-status           Print NvLink link status for all GPUs and",
    "                               NvSwitches in the system.",
    "  -h  --help                  Displays usage information and exits.",
    "  -g  --gpuid      gpuId      The GPU ID to query. Required for -e",
    "  -j  --json                  Print the output in a json format",
];

const NVLINK_4: &[&str] = &["", " ", " NVIDIA Datacenter GPU Management Interface", ""];

const NVLINK: &[&[&str]] = &[NVLINK_0, HOST, NVLINK_2, IGNORE_REST, NVLINK_4];
