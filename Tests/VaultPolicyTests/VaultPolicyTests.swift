import Testing
import VaultPolicy
