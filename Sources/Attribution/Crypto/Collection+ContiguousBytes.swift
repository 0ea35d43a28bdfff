extension Collection<UInt8> {
    /// Calls `body` with the bytes in one contiguous buffer: in place for arrays, slices and native strings'
    /// UTF-8 views, copied only for collections that have no contiguous storage.
    func withContiguousBytesForLibcrypto<Result>(_ body: (UnsafeRawBufferPointer) -> Result) -> Result {
        if let result = withContiguousStorageIfAvailable({ body(UnsafeRawBufferPointer($0)) }) {
            return result
        }
        return Array(self).withUnsafeBytes(body)
    }
}
