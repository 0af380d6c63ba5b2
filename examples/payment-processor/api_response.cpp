// API answers and Stripe-shaped errors; see api_response.hpp.
#include "api_response.hpp"

namespace processor {

ApiResponse json_response(int status, const Json& body) { return {status, body.dump()}; }

Json error_object(std::string_view type, std::string_view code, std::string_view message,
                  std::string_view param) {
  Json error;
  error["type"] = type;
  error["code"] = code;
  error["message"] = message;
  if (!param.empty()) error["param"] = param;
  return error;
}

ApiResponse api_error(int status, std::string_view type, std::string_view code, std::string_view message,
                      std::string_view param) {
  return json_response(status, Json{{"error", error_object(type, code, message, param)}});
}

}  // namespace processor
