import FerryCloudKit
import XCTest

final class CloudKitExchangeTests: XCTestCase {
    func testHeadersAreFoundWhateverTheirCase() {
        let request = CloudKitRequest(
            method: "POST", path: "/database/1/iCloud.x/development/public/records/query",
            query: [("ckAPIToken", "abc")], headers: [("X-Apple-CloudKit-Request-KeyID", "k1")])
        XCTAssertEqual(request.header("x-apple-cloudkit-request-keyid"), "k1")
        XCTAssertNil(request.header("Content-Type"))
        XCTAssertEqual(request.queryValue("ckAPIToken"), "abc")
        XCTAssertNil(request.queryValue("ckWebAuthToken"))
    }
}
