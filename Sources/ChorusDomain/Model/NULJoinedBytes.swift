extension [UInt8] {
    /// The UTF-8 bytes of `first`, a NUL, then those of `second`, in one allocation: the form of two-part keys (the
    /// decision state's, the stored responses') and of a sealed section's authenticated context, one or more of which
    /// an import makes for most events it reads.
    package init(_ first: String, nulThen second: String) {
        self.init()
        reserveCapacity(first.utf8.count + 1 + second.utf8.count)
        appendUTF8(of: first)
        append(0)
        appendUTF8(of: second)
    }
}
