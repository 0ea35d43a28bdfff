import Foundation

extension ConversionSchema {
    /// The schema in the file at `path`, as `--schema` reads it for every program that decodes (the command line
    /// and the receiver): a file that cannot be read, or is over ``maximumBytes``, or is malformed throws
    /// `invalid-option` naming the file and, for a malformed one, the line and the reason.
    public init(contentsOfFile path: String) throws(AttributionError) {
        let bytes: [UInt8]
        do {
            let handle = try FileHandle(forReadingFrom: URL(fileURLWithPath: path))
            defer { try? handle.close() }
            bytes = Array(try handle.read(upToCount: Self.maximumBytes + 1) ?? Data())
        } catch {
            throw AttributionError(
                .invalidOption, "--schema \(path): cannot read the file: \((error as NSError).localizedDescription)")
        }
        do {
            try self.init(parsing: bytes)
        } catch {
            throw AttributionError(.invalidOption, "--schema \(path): \(error.description)")
        }
    }
}
