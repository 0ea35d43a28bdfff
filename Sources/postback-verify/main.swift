#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

exit(Command.main(Array(CommandLine.arguments.dropFirst())))
