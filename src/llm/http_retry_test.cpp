#include "llm/http_retry.h"

#include <gtest/gtest.h>

#include <atomic>
#include <ctime>

#include "llm/testdata/test_support.h"

using namespace cutegen;
using namespace cutegen::testing;
using std::chrono::milliseconds;

namespace {

class HttpRetry : public LlmTest {};

// Answers with `failures` responses of `status` (with `headers`), then with a normal answer.
LocalServer failing_then_ok(int failures, int status, httplib::Headers headers = {}) {
  auto count = std::make_shared<std::atomic<int>>(0);
  return LocalServer([count, failures, status, headers](const httplib::Request&, httplib::Response& res) {
    if ((*count)++ < failures) {
      res.status = status;
      for (const auto& [k, v] : headers) res.set_header(k.c_str(), v);
      res.set_content(R"({"error": {"message": "try later"}})", "application/json");
    } else {
      res.set_content(openai_answer("finally"), "application/json");
    }
  });
}

}  // namespace

TEST(HttpRetryPolicy, RetriesConnectionLevelStatusesOnly) {
  for (long s : {408, 409, 429, 500, 502, 503, 504, 529}) EXPECT_TRUE(is_retryable_status(s)) << s;
  for (long s : {200, 400, 401, 403, 404, 413, 422}) EXPECT_FALSE(is_retryable_status(s)) << s;
}

TEST(HttpRetryPolicy, ReadsRetryAfterSecondsDatesAndRetryAfterMs) {
  HttpResponse r;
  EXPECT_FALSE(requested_retry_delay(r).has_value());
  r.headers["retry-after"] = "3";
  EXPECT_EQ(requested_retry_delay(r), milliseconds(3000));
  r.headers["retry-after"] = "1.5";
  EXPECT_EQ(requested_retry_delay(r), milliseconds(1500));
  r.headers["retry-after"] = "soon";
  EXPECT_FALSE(requested_retry_delay(r).has_value()) << "unreadable: the backoff applies";
  r.headers["retry-after"] = "Wed, 21 Oct 2015 07:28:00 GMT";
  EXPECT_EQ(requested_retry_delay(r), milliseconds(0)) << "a date in the past asks for no wait";
  r.headers["retry-after-ms"] = "250";
  EXPECT_EQ(requested_retry_delay(r), milliseconds(250)) << "retry-after-ms is the more precise of the two";
  r.headers.erase("retry-after-ms");
  for (const char* huge : {"inf", "1e30"}) {  // clamped, not an overflowing cast
    r.headers["retry-after"] = huge;
    auto d = requested_retry_delay(r);
    ASSERT_TRUE(d.has_value()) << huge;
    EXPECT_GE(*d, std::chrono::hours(24 * 365)) << huge;
  }
}

TEST(HttpRetryPolicy, RetryAfterAsAFutureHttpDateIsTheTimeUntilThen) {
  std::time_t in_20s = std::time(nullptr) + 20;
  std::tm tm{};
  gmtime_r(&in_20s, &tm);
  char date[64];
  std::strftime(date, sizeof date, "%a, %d %b %Y %H:%M:%S GMT", &tm);
  HttpResponse r;
  r.headers["retry-after"] = date;
  auto delay = requested_retry_delay(r);
  ASSERT_TRUE(delay.has_value()) << date;
  EXPECT_GT(*delay, milliseconds(18'000)) << date;
  EXPECT_LE(*delay, milliseconds(20'000)) << date;
}

TEST(HttpRetryPolicy, RepeatedOutcomesAreCountedNotRepeated) {
  EXPECT_EQ(summarize_outcomes({"HTTP 500", "HTTP 500", "HTTP 503", "timed out", "timed out", "timed out"}),
            "HTTP 500, 2 times; HTTP 503; timed out, 3 times");
  EXPECT_EQ(summarize_outcomes({"HTTP 429"}), "HTTP 429");
}

TEST(HttpRetryPolicy, BackoffDoublesUpToTheCapWithJitterInTheUpperHalf) {
  RetryPolicy p;
  p.initial_backoff = milliseconds(1000);
  p.max_backoff = milliseconds(5000);
  EXPECT_EQ(backoff_delay(p, 1, 0.0), milliseconds(500));
  EXPECT_EQ(backoff_delay(p, 1, 0.999), milliseconds(999));
  EXPECT_EQ(backoff_delay(p, 2, 0.0), milliseconds(1000));
  EXPECT_EQ(backoff_delay(p, 3, 0.0), milliseconds(2000));
  EXPECT_EQ(backoff_delay(p, 4, 0.0), milliseconds(2500));  // 8000 capped at 5000
  EXPECT_EQ(backoff_delay(p, 40, 0.5), milliseconds(3750));
}

TEST_F(HttpRetry, TooManyRequestsWithRetryAfterIsRetriedAfterTheRequestedWait) {
  auto server = failing_then_ok(1, 429, {{"Retry-After", "7"}});
  auto r = make(config("openai:gpt-5", server.url()))->complete(ask("hi"));
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->text, "finally");
  EXPECT_EQ(r->attempts, 2);
  EXPECT_EQ(server.request_count(), 2u);
  ASSERT_EQ(sleeps_.waits().size(), 1u);
  EXPECT_EQ(sleeps_.waits()[0], milliseconds(7000));
  ASSERT_EQ(progress().size(), 1u);
  EXPECT_NE(progress()[0].find("HTTP 429; retrying in 7.0 s (attempt 2 of 3)"), std::string::npos) << progress()[0];
}

TEST_F(HttpRetry, RetryAfterIsCapped) {
  auto server = failing_then_ok(1, 503, {{"Retry-After", "86400"}});
  auto c = config("openai:gpt-5", server.url());
  c.retry.max_retry_after = milliseconds(60'000);
  ASSERT_TRUE(make(c)->complete(ask("hi")).ok());
  ASSERT_EQ(sleeps_.waits().size(), 1u);
  EXPECT_EQ(sleeps_.waits()[0], milliseconds(60'000));
}

TEST_F(HttpRetry, RetryableStatusesWithoutRetryAfterBackOffExponentially) {
  auto server = failing_then_ok(3, 502);
  auto c = config("openai:gpt-5", server.url());
  c.retry.max_attempts = 4;
  c.retry.initial_backoff = milliseconds(1000);
  c.retry.max_backoff = milliseconds(30'000);
  auto r = make(c)->complete(ask("hi"));
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->attempts, 4);
  auto waits = sleeps_.waits();
  ASSERT_EQ(waits.size(), 3u);
  for (int i = 0; i < 3; ++i) {
    long base = 1000L << i;
    EXPECT_GE(waits[i].count(), base / 2) << i;
    EXPECT_LE(waits[i].count(), base) << i;
  }
}

TEST_F(HttpRetry, ConflictAndRequestTimeoutAreRetried) {
  for (int status : {408, 409}) {
    auto server = failing_then_ok(1, status);
    auto r = make(config("openai:gpt-5", server.url()))->complete(ask("hi"));
    ASSERT_TRUE(r.ok()) << status << ": " << r.error().message;
    EXPECT_EQ(r->attempts, 2) << status;
  }
}

TEST_F(HttpRetry, ServerErrorsUntilTheLimitGiveOneErrorListingEveryAttempt) {
  auto server = failing_then_ok(1000, 500);
  auto r = make(config("openai:gpt-5", server.url()))->complete(ask("hi"));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(server.request_count(), 3u);
  EXPECT_EQ(sleeps_.waits().size(), 2u);
  const auto& m = r.error().message;
  EXPECT_NE(m.find("failed after 3 attempts (HTTP 500, 3 times)"), std::string::npos) << m;
  EXPECT_NE(m.find("last response: try later"), std::string::npos) << m;
  EXPECT_NE(m.find(server.url() + "/chat/completions"), std::string::npos) << m;
  EXPECT_EQ(m.find('\n'), std::string::npos);
}

TEST_F(HttpRetry, ConnectionRefusedIsRetriedThenReported) {
  auto url = refused_url();
  auto r = make(config("openai:gpt-5", url))->complete(ask("hi"));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(sleeps_.waits().size(), 2u);
  EXPECT_NE(r.error().message.find("failed after 3 attempts"), std::string::npos) << r.error().message;
  EXPECT_NE(r.error().message.find("cannot connect"), std::string::npos) << r.error().message;
  EXPECT_NE(r.error().message.find("Connection refused"), std::string::npos) << r.error().message;
  EXPECT_NE(r.error().message.find(", 3 times)"), std::string::npos) << r.error().message;
  EXPECT_EQ(r.error().message.find(" ms:"), std::string::npos) << "libcurl's varying 'after N ms' is left out";
}

TEST(HttpRetryPolicy, AFailureOfTheRequestItselfIsNotRetried) {
  // What CurlTransport reports for a TLS verification failure or an oversized answer: trying again
  // would only repeat it (and download 64 MiB again).
  struct Failing : HttpTransport {
    int posts = 0;
    ErrorKind kind;
    explicit Failing(ErrorKind k) : kind(k) {}
    Result<HttpResponse> post(const HttpRequest&) override {
      ++posts;
      return Error{"SSL certificate problem: self-signed certificate", kind};
    }
  };
  std::vector<milliseconds> waits;
  RetryHooks hooks{"openai", [&waits](milliseconds d) { waits.push_back(d); }, {}};
  RetryPolicy policy;
  policy.max_attempts = 3;
  Failing fatal(ErrorKind::not_retryable);
  auto r = post_with_retries(fatal, HttpRequest{.url = "https://api.example/v1"}, policy, hooks);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(fatal.posts, 1);
  EXPECT_TRUE(waits.empty());
  EXPECT_NE(r.error().message.find("failed after 1 attempt (SSL certificate problem"), std::string::npos)
      << r.error().message;
  EXPECT_NE(r.error().message.find("not retried"), std::string::npos) << r.error().message;
  Failing transient(ErrorKind::general);  // the same text without the kind: retried as before
  EXPECT_FALSE(post_with_retries(transient, HttpRequest{.url = "https://api.example/v1"}, policy, hooks).ok());
  EXPECT_EQ(transient.posts, 3);
}

TEST_F(HttpRetry, ServerThatNeverAnswersHitsTheTotalTimeoutQuickly) {
  SilentServer server;
  auto c = config("openai:gpt-5", server.url());
  c.timeout = milliseconds(300);
  c.retry.max_attempts = 2;
  auto start = std::chrono::steady_clock::now();
  auto r = make(c)->complete(ask("hi"));
  double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_FALSE(r.ok());
  EXPECT_LT(elapsed, 3.0);
  EXPECT_GE(elapsed, 0.55);  // two attempts of 300 ms each really waited
  EXPECT_NE(r.error().message.find("failed after 2 attempts"), std::string::npos) << r.error().message;
  EXPECT_NE(r.error().message.find("timed out"), std::string::npos) << r.error().message;
}

namespace {

// A clock that only the recorded sleeps move: the deadline tests take no real time.
struct FakeClock {
  std::chrono::steady_clock::time_point t{};
  std::vector<milliseconds> waits;
  RetryHooks hooks() {
    return RetryHooks{"openai", [this](milliseconds d) { waits.push_back(d), t += d; }, {}, [this] { return t; }};
  }
};

}  // namespace

TEST(HttpRetryPolicy, TheCallDeadlineEndsRetriesThatWouldTakeLonger) {
  struct Busy : HttpTransport {
    int posts = 0;
    Result<HttpResponse> post(const HttpRequest&) override {
      ++posts;
      HttpResponse r;
      r.status = 503;
      r.headers["retry-after"] = "4";
      return r;
    }
  } busy;
  FakeClock clock;
  RetryPolicy policy;
  policy.max_attempts = 10;
  policy.deadline = milliseconds(10'000);
  auto r = post_with_retries(busy, HttpRequest{.url = "https://api.example/v1"}, policy, clock.hooks());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(busy.posts, 3) << "attempts at 0, 4 and 8 s; the next would start at 12 s";
  EXPECT_EQ(clock.waits, (std::vector<milliseconds>{milliseconds(4000), milliseconds(4000)}));
  const auto& m = r.error().message;
  EXPECT_NE(m.find("failed after 3 attempts (HTTP 503, 3 times)"), std::string::npos) << m;
  EXPECT_NE(m.find("call deadline of 10 s (llm.call_deadline_s)"), std::string::npos) << m;
  EXPECT_EQ(m.find("llm.max_attempts"), std::string::npos) << "the attempts were not what ran out: " << m;
}

TEST(HttpRetryPolicy, EachAttemptGetsAtMostWhatIsLeftOfTheDeadline) {
  struct Slow : HttpTransport {
    FakeClock* clock = nullptr;
    std::vector<milliseconds> timeouts;
    Result<HttpResponse> post(const HttpRequest& request) override {
      timeouts.push_back(request.timeout);
      clock->t += request.timeout;  // hangs until its timeout
      return Error{"Operation timed out"};
    }
  } slow;
  FakeClock clock;
  slow.clock = &clock;
  RetryPolicy policy;
  policy.max_attempts = 4;
  policy.initial_backoff = policy.max_backoff = milliseconds(1000);
  policy.deadline = milliseconds(15'000);
  HttpRequest request{.url = "https://api.example/v1"};
  request.timeout = milliseconds(10'000);
  auto r = post_with_retries(slow, request, policy, clock.hooks());
  ASSERT_FALSE(r.ok());
  ASSERT_EQ(slow.timeouts.size(), 2u);
  EXPECT_EQ(slow.timeouts[0], milliseconds(10'000));
  EXPECT_LE(slow.timeouts[1], milliseconds(4'500)) << "15 s minus the first attempt and its wait";
  EXPECT_GE(slow.timeouts[1], milliseconds(4'000));
  EXPECT_LE(clock.t - std::chrono::steady_clock::time_point{}, milliseconds(15'000));
  EXPECT_NE(r.error().message.find("llm.call_deadline_s"), std::string::npos) << r.error().message;
}

TEST_F(HttpRetry, AServerThatNeverAnswersIsGivenUpAtTheCallDeadline) {
  SilentServer server;
  auto c = config("openai:gpt-5", server.url());
  c.timeout = milliseconds(5000);
  c.retry.max_attempts = 4;
  c.retry.deadline = milliseconds(400);
  auto start = std::chrono::steady_clock::now();
  auto r = make(c)->complete(ask("hi"));
  double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_FALSE(r.ok());
  EXPECT_LT(elapsed, 2.0) << "the 5 s attempt timeout was cut to the deadline";
  EXPECT_NE(r.error().message.find("call deadline"), std::string::npos) << r.error().message;
}
