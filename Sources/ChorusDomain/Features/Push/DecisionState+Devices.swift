import ChorusLog

/// What the decisions about devices read in the state (the tables `device-tokens` and `devices`).
extension DecisionState {
    /// The user and device a token is registered as, by its key; nil when no device has it.
    func device(withTokenKey tokenKey: String, in state: some StateReader) throws -> (user: UserID, device: DeviceID)? {
        try state.withValue(for: Self.key(tokenKey), in: deviceTokens) { value in
            guard let value, let separator = value.firstIndex(of: 0) else { return nil }
            return (
                UserID(unchecked: String(decoding: value[..<separator], as: UTF8.self)),
                DeviceID(unchecked: String(decoding: value[(separator + 1)...], as: UTF8.self))
            )
        }
    }

    /// The key of the token of `user`'s `device`; nil when they have no such device.
    func tokenKey(of device: DeviceID, of user: UserID, in state: some StateReader) throws -> String? {
        try state.withValue(for: Self.key(user.rawValue, device.rawValue), in: devices) { value in
            value.map { String(decoding: $0, as: UTF8.self) }
        }
    }

    /// `user`'s devices, oldest first, with their token keys.
    func devices(of user: UserID, in state: some StateReader) throws -> [(device: DeviceID, tokenKey: String)] {
        try ids(of: user, in: devices, state: state).map { id in
            let device = DeviceID(unchecked: id)
            return (device, try tokenKey(of: device, of: user, in: state) ?? "")
        }
    }
}
