// An answer of the processor's API: a status and the exact JSON bytes. Built in one place so a
// stored answer replays byte for byte, and errors all have Stripe's shape {"error":{type,code,…}}.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>

namespace processor {

using Json = nlohmann::ordered_json;  // keeps fields in the order written: "id" first, like Stripe

struct ApiResponse {
  int status = 200;
  std::string body;
};

ApiResponse json_response(int status, const Json& body);

// {"type","code","message"} and "param" when one request parameter is at fault.
Json error_object(std::string_view type, std::string_view code, std::string_view message,
                  std::string_view param = {});

// json_response(status, {"error": error_object(...)}).
ApiResponse api_error(int status, std::string_view type, std::string_view code, std::string_view message,
                      std::string_view param = {});

}  // namespace processor
