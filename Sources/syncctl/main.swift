// syncctl: hand the command line to SyncControl's CLI and exit with its status. Nothing else lives here.
import Glibc
import SyncControl

let environment = ProcessInput.environment()
exit(Syncctl.run(arguments: Array(CommandLine.arguments.dropFirst()), environment: environment,
                 output: .current(environment: environment), readFile: ProcessInput.readFile))
