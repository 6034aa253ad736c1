import Testing
import Varlink
